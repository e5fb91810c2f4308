package leasedwrite

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/precondition"
)

// StateReader is what a leased write reads of the store, for one request.
// proxy's backend implements it.
type StateReader interface {
	// Head reads the state of the object at t (a missing object is the
	// zero ObjectState, not an error).
	Head(ctx context.Context, t operation.Target) (precondition.ObjectState, error)
	// CopySourceSize is the size of the object a CopyObject copies (0 when
	// it is missing: the copy then fails at the store).
	CopySourceSize(ctx context.Context) (int64, error)
	// PartsTotal sums the sizes of the parts of the upload a
	// CompleteMultipartUpload completes (0 when the upload is unknown);
	// ErrPartsUnlisted when the store does not list parts.
	PartsTotal(ctx context.Context) (int64, error)
}

// ErrPartsUnlisted: the store does not implement ListParts (s3rver
// answers 405), so a completion's work cannot be measured.
var ErrPartsUnlisted = errors.New("the store does not list an upload's parts")

// Guard is what a leased write asks of the one request that sends it, in
// the manner of httputil.ReverseProxy's hooks: the sender knows nothing of
// leases, only when to call these. The zero Guard asks nothing.
type Guard struct {
	// Ctx is the store request's context (nil: the client's). A leased
	// write's outlives its client once the write reached the store.
	Ctx context.Context
	// Enforced: s3cond enforces the write's conditions itself, so the
	// client's If-Match / If-None-Match are not sent.
	Enforced bool
	// StoreCondition, if set, is a condition sent to the store, rebuilt
	// from the checked one, for a store that evaluates it (storechecks.go).
	StoreCondition http.Header
	// BeforeFinalByte runs before the body's final byte leaves (or, for a
	// bodiless request, before it is sent); an error cancels the request
	// and is the client's answer.
	BeforeFinalByte func() error
	// BeforeSuccess runs once the store answered 2xx, before the answer is
	// relayed; an error replaces it.
	BeforeSuccess func() error
	// Answered, if set, is given the store's answer once it was relayed
	// in full, for a request addressing the key's current version (not one
	// version by versionId): the key's state it reports is recorded on
	// the lease's release in strict mode (recorded.go).
	Answered func(status int, header http.Header)
}

// Sender sends one leased write to the store and answers its client.
// proxy implements it for a call.
type Sender interface {
	// BodyLength is the length of the body Send sends: -1 unknown.
	BodyLength() int64
	// BufferBody reads the (small) body whole and verifies it, so that it
	// is sent from memory.
	BufferBody() error
	// Send sends the write under g and relays the store's answer; it
	// reports whether that answer was read in full (false when the
	// request failed, or the sender answered with an error of its own).
	Send(g Guard) (answered bool)
	// Fail answers the client with err; nothing was sent.
	Fail(err error)
}

// Request is one leased write as the proxy classified it.
type Request struct {
	// ID is the request's x-amz-request-id, for logs.
	ID string
	Op operation.Operation
	// Target is what the write writes.
	Target operation.Target
	// Ctx is the client request's context: it ends when the client hangs up.
	Ctx context.Context
	// Mode is the store's mode, read once for this request.
	Mode Mode
	// LeasePath names a target's lease row (proxy's Backend.leasePath).
	LeasePath func(operation.Target) string
	// StoreWork, if positive, is the bytes the store assembles once a
	// PutObject is sent (an append completed by a multipart upload of its
	// existing object, proxy/append*.go): its lease is sized to it, as a
	// copy's is (size.go).
	StoreWork int64
	// ClientBodyLength is the client body's decoded length, -1 unknown.
	ClientBodyLength int64
	// Backend names the store, for logs.
	Backend string
	State   StateReader
	// KeyTarget names the object of a DeleteObjects entry's key.
	KeyTarget func(key string) operation.Target
	// LeaseWait, if set, is told how long taking the lease took.
	LeaseWait func(time.Duration)
	// Strict: every write of the target's bucket is leased
	// (lease.serialize: all-writes), so its lease rows may record the key's
	// state (recorded.go) — where Mode.RecordsKeyStates says the store's
	// acknowledgements can be trusted for it.
	Strict bool
	// Renames, if set, is the store of the target's bucket, with which a
	// RenameObject of the target's key that its holder left between its
	// copy and its delete is finished. That runs when the write's lease
	// was taken over from a holder that never released it (renamefinish.go).
	Renames RenameStore
	// Receipt, if set, is the receipt of the write's answer, read in full
	// and 2xx, that its lease's release records for the write's retries
	// (receipt.go); empty: none.
	Receipt func(status int, header http.Header) string
}

// Condition is what a leased write needs from its condition.
// precondition.Conditions is one; precondition.AnyState is strict mode's.
type Condition interface {
	Evaluate(precondition.ObjectState) error
	LeaseETag(precondition.ObjectState) string
	Covers(leaseETag string, s precondition.ObjectState) bool
}

var (
	_ Condition = precondition.Conditions{}
	_ Condition = precondition.AnyState{}
)

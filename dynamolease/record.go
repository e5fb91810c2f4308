package dynamolease

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Record is one lease row (see the package documentation for its schema).
type Record struct {
	Path, ETag string
	Generation uint64
	Timeout    time.Duration // stored in whole milliseconds
	TTL        time.Time     // when the table may remove the row; stored in whole seconds
	Owner      string
	Released   bool
	// KeyState, on a released row, is the key's state its holder left
	// (keystate.go); nil on every other row write.
	KeyState *KeyState
	// Receipt, on a released row, is the answer a holder's write got,
	// sealed with the time it was recorded (receipt.go), opaque to Tables;
	// empty on every other row write.
	Receipt string
	// Unreadable says what was wrong with the stored row when some of it
	// could not be read as written (internal/rowcodec); empty for a sound row.
	// Such a row reads as held, with the reader's own lease timeout.
	Unreadable string
	// Fence, on a Record given to Replace for a takeover, is the rest of
	// the row the writer saw (fence.go): the write lands only if the
	// stored row still shows it as well as the seen generation. Nil on
	// renewals and releases of the writer's own row. A condition, never
	// stored: Tables never return it.
	Fence *Fence
}

// Table is the smallest store that can carry the protocol. Implementations
// must make Create and Replace atomic against each other and give Get strong
// consistency.
type Table interface {
	// Create writes r if no row (r.Path, r.ETag) exists. If one does, it
	// returns that row and ErrConditionFailed; the row may be nil when it
	// vanished between the failed write and the read that followed it.
	Create(ctx context.Context, r Record) (existing *Record, err error)
	// Replace writes r if the row exists, its generation is seen and, when
	// r.Fence is set, r.Fence.Matches it. If not, it returns the current
	// row (nil if none) and ErrConditionFailed.
	Replace(ctx context.Context, r Record, seen uint64) (current *Record, err error)
	// Get reads a row with strong consistency; nil, nil when absent.
	Get(ctx context.Context, path, etag string) (*Record, error)
}

// ErrConditionFailed is what a Table returns when a conditional write lost.
var ErrConditionFailed = errors.New("dynamolease: condition failed")

// ErrWaitBudgetExceeded means another holder kept the lease for longer than
// Options.WaitBudget; the proxy answers 409 ConditionalRequestConflict.
var ErrWaitBudgetExceeded = errors.New("dynamolease: another conditional write on this key is still in progress")

// ErrLeaseLost means a renewal or release found that someone else took the
// lease over: the holder's write may race with theirs.
var ErrLeaseLost = errors.New("dynamolease: lease lost")

// StoreError means the lease table itself failed (unreachable, throttled,
// malformed row); the proxy answers 503, or what a Refusal inside it says.
type StoreError struct {
	Op  string // "create", "replace" (takeover), "get", "renew", "release"
	Err error
}

func (e *StoreError) Error() string { return fmt.Sprintf("lease table %s: %v", e.Op, e.Err) }
func (e *StoreError) Unwrap() error { return e.Err }

// Normalise rounds r to what a DynamoDB row can carry (milliseconds of
// timeout, seconds of TTL), so every Table returns the same values: each
// stores its rows normalised.
func Normalise(r Record) Record {
	r.Fence = nil // a condition, not part of the row
	if r.KeyState != nil {
		ks := *r.KeyState // a row stored must not share it with its writer
		r.KeyState = &ks
	}
	r.Timeout = r.Timeout.Truncate(time.Millisecond)
	if !r.TTL.IsZero() {
		r.TTL = time.Unix(r.TTL.Unix(), 0)
	}
	return r
}

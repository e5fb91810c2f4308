package leasedwrite

import (
	"context"
	"net/http"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/precondition"
)

// Recorded key states (SPEC §3, "Recorded key states"). In strict mode
// every write of a key is leased on the version it replaces, so a lease
// row can say what the key is now: a write whose condition names its lease
// up front (If-None-Match: *, If-Match with one ETag) takes the lease
// first, and where the row it takes over vouches for its version
// (dynamolease/keystate.go) evaluates its condition on that, with no HEAD:
// one lease round trip and the write. Elsewhere it reads the state under
// the lease, as the re-check would. On release, a write whose answer was
// read in full records the state it left (a PutObject's ETag, a
// DeleteObject's absence); one with any other outcome records nothing,
// which clears the row's record.

// acquiresFirst tells whether this write seeks its lease before any read
// of the store.
func (lw *write) acquiresFirst() bool {
	if !lw.req.Strict {
		return false
	}
	pc, ok := lw.cond.(precondition.Conditions)
	if !ok {
		return false
	}
	_, ok = pc.LeaseETagUnread()
	return ok
}

// acquireFirst takes the lease named by the condition alone, and checks
// the condition on the state its row vouches for, or on a HEAD under it.
func (w *Writer) acquireFirst(ctx context.Context, req Request, cond Condition) (*dynamolease.Lease, error) {
	etag, _ := cond.(precondition.Conditions).LeaseETagUnread()
	lease, err := w.leases.AcquireRecorded(ctx, req.LeasePath(req.Target), etag, recordedCheck(req, req.Target, cond, etag))
	if err != nil {
		return nil, leaseError(err)
	}
	return lease, nil
}

// recordedCheck is leaseCheck on the state a row vouches for, or on a HEAD
// when it vouches for none.
func recordedCheck(req Request, t operation.Target, cond Condition, etag string) func(context.Context, *dynamolease.KeyState) error {
	read := leaseCheck(req, t, cond, etag)
	return func(ctx context.Context, vouched *dynamolease.KeyState) error {
		if vouched == nil {
			return read(ctx)
		}
		s := precondition.ObjectState{Exists: vouched.Exists, ETag: vouched.ETag}
		if err := cond.Evaluate(s); err != nil {
			return err
		}
		if !cond.Covers(etag, s) {
			return errETagMoved
		}
		return nil
	}
}

// noteAnswer keeps the key's state a store's answer, read in full,
// reports: a PutObject's ETag, a DeleteObject's absence. Copies and
// completions answer theirs in the body, and record none.
func (lw *write) noteAnswer(status int, header http.Header) {
	if !lw.req.Strict || status < 200 || status > 299 {
		return
	}
	switch lw.req.Op {
	case operation.PutObject:
		if etag := header.Get("ETag"); etag != "" {
			lw.outcome = &dynamolease.KeyState{Exists: true, ETag: precondition.CanonicalETag(etag)}
		}
	case operation.DeleteObject:
		lw.outcome = &dynamolease.KeyState{}
	}
}

// recordOutcome hands the noted state to the write's one lease, which
// records it on release; guard.end releases it only when the answer was
// read in full.
func (lw *write) recordOutcome() {
	if lw.outcome == nil || lw.g == nil {
		return
	}
	lw.g.mu.Lock()
	leases := lw.g.leases
	lw.g.mu.Unlock()
	if len(leases) == 1 {
		leases[0].RecordOutcome(*lw.outcome)
	}
}

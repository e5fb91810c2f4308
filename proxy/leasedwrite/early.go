package leasedwrite

import (
	"context"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/precondition"
)

// earlyLease is a lease sought while the fail-fast HEAD runs (SPEC §3 steps
// 1 and 2 overlapped): where the condition alone names the lease's ETag, the
// lease store and the object store are asked at once, and a write that
// created its row needs no re-check (step 4), so a create or a CAS costs one
// lease round trip beside two store round trips.
type earlyLease struct {
	etag   string
	cancel context.CancelFunc
	done   chan struct{}
	lease  *dynamolease.Lease
	err    error
}

// startEarlyLease starts seeking the lease of a write whose state read is
// sent at readAt, or returns nil where the lease must wait for the state:
// its ETag depends on it (If-Match: *, lists, strict mode), or the body
// streams (its lease is sought once the upload is in, so the first upload
// to finish wins, and a long one re-checks).
func (w *Writer) startEarlyLease(req Request, cond Condition, readAt time.Time) *earlyLease {
	pc, ok := cond.(precondition.Conditions)
	if !ok {
		return nil
	}
	etag, ok := pc.LeaseETagUnread()
	if !ok {
		return nil
	}
	if sendsBody(req.Op) && !bufferedBody(req.ClientBodyLength) {
		return nil
	}
	ctx, cancel := context.WithCancel(req.Ctx)
	e := &earlyLease{etag: etag, cancel: cancel, done: make(chan struct{})}
	check := leaseCheck(req, req.Target, cond, etag)
	go func() {
		defer close(e.done)
		e.lease, e.err = w.leases.AcquireAfterRead(ctx, req.LeasePath(req.Target), etag, readAt, check)
	}()
	return e
}

// wait returns the lease once it is held.
func (e *earlyLease) wait() (*dynamolease.Lease, error) {
	<-e.done
	e.cancel()
	return e.lease, e.err
}

// abandonEarly gives up an early lease: its write answered without it (the
// HEAD failed, so no body was read), and the answer does not wait for the
// lease. Whatever the lease store still grants is released in the
// background.
func (w *Writer) abandonEarly(e *earlyLease) {
	if e == nil {
		return
	}
	e.cancel()
	w.releases.start()
	go func() {
		defer w.releases.done()
		<-e.done
		if e.lease != nil {
			w.releaseNotAwaited(e.lease)
		}
	}()
}

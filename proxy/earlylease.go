package proxy

import (
	"context"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/internal/operation"
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
func (p *Proxy) startEarlyLease(c *call, conds writeCondition, readAt time.Time) *earlyLease {
	pc, ok := conds.(precondition.Conditions)
	if !ok {
		return nil
	}
	etag, ok := pc.LeaseETagUnread()
	if !ok {
		return nil
	}
	if sendsBody(c.op) && !bufferedBody(c.auth.Body.Length()) {
		return nil
	}
	ctx, cancel := context.WithCancel(c.r.Context())
	e := &earlyLease{etag: etag, cancel: cancel, done: make(chan struct{})}
	check := p.leaseCheck(c, c.target, conds, etag)
	go func() {
		defer close(e.done)
		e.lease, e.err = p.leases.AcquireAfterRead(ctx, c.backend.leasePath(c.target), etag, readAt, check)
	}()
	return e
}

// wait returns the lease once it is held.
func (e *earlyLease) wait() (*dynamolease.Lease, error) {
	<-e.done
	e.cancel()
	return e.lease, e.err
}

// abandon gives up an early lease: its write answered without it (the HEAD
// failed, so no body was read), and the answer does not wait for the lease.
// Whatever the lease store still grants is released in the background.
func (p *Proxy) abandonEarly(e *earlyLease) {
	if e == nil {
		return
	}
	e.cancel()
	p.releases.start()
	go func() {
		defer p.releases.done()
		<-e.done
		if e.lease != nil {
			p.releaseNotAwaited(e.lease)
		}
	}()
}

func sendsBody(op operation.Operation) bool {
	return op == operation.PutObject || op == operation.CompleteMultipartUpload
}

// bufferedBody tells whether a body of this length is read whole before it
// is sent (leasedWrite).
func bufferedBody(length int64) bool { return length >= 0 && length <= maxBufferedBody }

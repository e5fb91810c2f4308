package leasedwrite

import (
	"context"
	"errors"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/s3err"
)

// heldThroughout fails a write whose backend answer came after one of its
// leases lapsed: lost (taken over, or not renewed before its deadline), or
// past its deadline on this process's monotonic clock, which runs on while
// the process is paused (SIGSTOP, a frozen VM). Such a holder may wake to
// the store's 200 before its renewal goroutine notices anything; by then a
// contender may have been acknowledged on the key, so the write was not
// guarded and must not be answered as a success. The answer is 503: the
// write's outcome is unknown (the store may have committed it), which a
// client must treat as it treats a lost connection, and the leases are left
// to expire (docs/spec.md §3).
func (g *guard) heldThroughout() error {
	g.mu.Lock()
	leases := g.leases
	g.mu.Unlock()
	for _, l := range leases {
		lapsed := l.Remaining() <= 0
		select {
		case <-l.Lost():
			lapsed = true
		default:
		}
		if lapsed {
			g.w.log.Error().Str("request_id", g.req.ID).Str("path", l.Path()).Uint64("generation", l.Generation()).
				Msg("the store answered a leased write after its lease lapsed; answering 503, its outcome is unknown")
			return s3err.Newf(s3err.ServiceUnavailable,
				"The write's lease lapsed before the store answered; its outcome is unknown.")
		}
	}
	return g.confirmLeases(leases)
}

// confirmLeases reads the rows of leases not confirmed within
// lease.timeout (a sized lease's renewals come at half its length) before a
// success is relayed (dynamolease.Lease.Confirm). A row released by an
// operator or taken over means another writer may have been acknowledged on
// the key while this write ran: the answer is 500, not S3's 409
// ConditionalRequestConflict, because the store did the write (409 says
// nothing happened). The lease is counted lost (s3cond_leases_lost_total)
// and left as it is. A lease store that cannot answer gets 503.
func (g *guard) confirmLeases(leases []*dynamolease.Lease) error {
	// The client may have hung up while the store worked: the answer is
	// still owed to the log and the lease.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(g.req.Ctx), g.w.leaseTimeout)
	defer cancel()
	for _, l := range leases {
		err := l.Confirm(ctx)
		switch {
		case err == nil:
			continue
		case errors.Is(err, dynamolease.ErrLeaseLost):
			g.w.log.Error().Err(err).Str("request_id", g.req.ID).Str("path", l.Path()).Uint64("generation", l.Generation()).
				Msg("the store did a leased write whose lease was released or taken over meanwhile; answering 500, not success")
			return s3err.Newf(s3err.InternalError,
				"The write's lease was released or taken over while the store did it; another conditional write on the key may have succeeded.")
		default:
			g.w.log.Error().Err(err).Str("request_id", g.req.ID).Str("path", l.Path()).
				Msg("could not confirm a leased write's lease before answering; answering 503, its outcome is unknown")
			return s3err.Newf(s3err.ServiceUnavailable,
				"The write's lease could not be confirmed before answering; its outcome is unknown.")
		}
	}
	return nil
}

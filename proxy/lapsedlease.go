package proxy

import (
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
func (g *guardedWrite) heldThroughout() error {
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
			g.p.log.Error().Str("request_id", g.c.id).Str("path", l.Path()).Uint64("generation", l.Generation()).
				Msg("the store answered a leased write after its lease lapsed; answering 503, its outcome is unknown")
			return s3err.Newf(s3err.ServiceUnavailable,
				"The write's lease lapsed before the store answered; its outcome is unknown.")
		}
	}
	return nil
}

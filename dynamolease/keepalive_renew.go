package dynamolease

import "context"

// renewInBackground is KeepAlive's renewal. Stopping KeepAlive does not
// cut it short: a renewal cancelled after it was sent may still land,
// leaving the row a generation ahead of the lease, so the release that
// follows would find it "taken over". Stop waits for it instead, bounded by
// one lease timeout.
func (l *Lease) renewInBackground(ctx context.Context) error {
	renewCtx, cancel := l.c.cleanupContext(ctx)
	defer cancel()
	return l.Renew(renewCtx)
}

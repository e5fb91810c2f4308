package dynamolease

import (
	"context"
	"time"
)

// MaxSizedTimeout is the longest lease Extend may ever write: the longest
// timeout a reader believes a row carries (a longer one reads as unusable,
// and is then held only for the reader's own timeout × skew). Options'
// SizedLeaseCap is at most this.
const MaxSizedTimeout = 24 * time.Hour

// DefaultSizedLeaseCap is Options.SizedLeaseCap's default
// (lease.max_sized_timeout): 6 minutes cover the largest CopyObject S3
// accepts (5 GiB) at 16 MiB/s after a 20 s lease, and make a discarded
// lease file wait 18 minutes with the default skew rate of 3.
const DefaultSizedLeaseCap = 6 * time.Minute

// Extend lengthens a held lease to timeout (at most Options.SizedLeaseCap;
// a shorter one is a no-op) by a renewal that writes the new length on the
// row. It is for a write whose work at the store may outlast
// Options.Timeout: a CopyObject of a large source, a
// CompleteMultipartUpload of large parts. The store goes on with such work
// after its requester is gone (killed, paused, cut off), so the row must
// not be taken over before the work could have ended; every process waits
// the row's own timeout × MaxClockSkewRate before a takeover, whatever its
// own Options.Timeout (staleAfter reads the row's), and later renewals
// keep the length. Call it before KeepAlive. Errors are Renew's; on one,
// the lease keeps its old length here (the row may carry either), so its
// Deadline stays the earlier one.
func (l *Lease) Extend(ctx context.Context, timeout time.Duration) error {
	timeout = min(timeout, l.c.opts.SizedLeaseCap)
	l.mu.Lock()
	previous := l.timeout
	if timeout <= previous {
		l.mu.Unlock()
		return nil
	}
	l.timeout = timeout
	l.mu.Unlock()
	if err := l.Renew(ctx); err != nil {
		l.mu.Lock()
		l.timeout = previous
		l.mu.Unlock()
		return err
	}
	return nil
}

// rowTTL is how long the table keeps a row written with this lease length:
// Options.TTL, or longer when the lease's takeover wait would outlast it (a
// row the table dropped early would let a contender create it afresh while
// its holder's store work may still run).
func (o Options) rowTTL(timeout time.Duration) time.Duration {
	return max(o.TTL, 2*o.staleAfter(timeout))
}

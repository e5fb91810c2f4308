package dynamolease

import (
	"context"
	"time"
)

// AcquireSized is AcquireAfterRead for a write whose work at the store may
// outlast Options.Timeout: a CopyObject of a large source, a
// CompleteMultipartUpload of large parts. The store goes on with such work
// after its requester is gone (killed, paused, cut off), so the lease must
// not be taken over before the work could have ended: the row carries
// timeout (never less than Options.Timeout) as its own lease length, and
// every process in a fleet waits that × MaxClockSkewRate before taking a
// row over, whatever its own Options.Timeout (staleAfter reads the row's).
// Renewals keep the same length. A length over MaxSizedTimeout is cut to it.
func (c *Committer) AcquireSized(ctx context.Context, path, etag string, readAt time.Time, timeout time.Duration, check func(context.Context) error) (*Lease, error) {
	start := time.Now()
	lease, err := c.acquire(ctx, path, etag, readAt, min(timeout, MaxSizedTimeout), check)
	c.opts.Observer.AcquireDone(time.Since(start), err)
	return lease, err
}

// MaxSizedTimeout is the longest lease AcquireSized writes: the longest
// timeout a reader believes a row carries (a longer one reads as unusable,
// and is then held only for the reader's own timeout × skew).
const MaxSizedTimeout = 24 * time.Hour

// rowTTL is how long the table keeps a row written with this lease length:
// Options.TTL, or longer when the lease's takeover wait would outlast it (a
// row the table dropped early would let a contender create it afresh while
// its holder's store work may still run).
func (o Options) rowTTL(timeout time.Duration) time.Duration {
	return max(o.TTL, 2*o.staleAfter(timeout))
}

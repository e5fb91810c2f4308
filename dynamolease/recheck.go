package dynamolease

import "time"

// rowTTLRounding is how much earlier than its TTL a row may go: the TTL is
// stored in whole seconds.
const rowTTLRounding = time.Second

// recheckNeedless reports whether the re-check under a freshly held lease
// (SPEC §3 step 4) can be skipped: only when this Acquire created the row,
// and its create was answered within one lease timeout of the caller's
// state read being sent.
//
// The argument (docs/correctness.md, "A created row needs no re-check"): a
// leased write of the version this row names that landed after the state
// read held the row while it ran, and wrote the row (acquire, renewal or
// release) at most a lease timeout before it ended, its final bytes
// arriving within a further timeout × skew (assumption 4). Every row write
// keeps the row for TTL, which must exceed those two plus this window, each
// stretched by the skew rate, so the row would still have been there and
// the create would have failed. A longer window (a streaming upload that
// took long before it sought the lease) re-checks, as does every takeover.
// Rows written with a longer timeout than Options.Timeout would need that
// timeout here.
func (c *Committer) recheckNeedless(a *attempt, l *Lease) bool {
	if unsafeTrustStateRead {
		return true
	}
	if a.readAt.IsZero() || l.createdBy.IsZero() {
		return false
	}
	window := c.opts.Timeout
	if l.createdBy.Sub(a.readAt) > window {
		return false
	}
	return c.opts.TTL > 2*c.opts.staleAfter(c.opts.Timeout)+c.opts.staleAfter(window)+rowTTLRounding
}

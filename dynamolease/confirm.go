package dynamolease

import (
	"context"
	"time"
)

// Confirm makes sure the lease is still this holder's before its write is
// answered as a success (SPEC §3 step 5). A sized lease is renewed only
// at half its length, so between renewals an operator's `s3cond leases
// release` (or a takeover after it) goes unnoticed: the holder would answer
// 200 for a write whose key another writer was acknowledged on meanwhile.
// When the lease's last confirmation (the write that won or renewed the
// row) is older than Options.Timeout, Confirm reads the row: one still of
// this lease's owner, not released, at its generation or a later renewal's,
// confirms it; anything else marks the lease lost and returns an error
// wrapping ErrLeaseLost. A table failure returns a *StoreError: the lease
// cannot be confirmed.
func (l *Lease) Confirm(ctx context.Context) error {
	if unsafeAnswerUnconfirmed {
		return nil
	}
	if l.isLost() {
		return l.lostError("confirm", nil)
	}
	l.mu.Lock()
	last, mine := l.acquired, l.generation
	l.mu.Unlock()
	if time.Since(last) < l.c.opts.Timeout {
		return nil
	}
	call, done := tableCall(ctx)
	row, err := l.c.table.Get(call, l.key.path, l.key.etag)
	done()
	if err != nil {
		return l.c.storeError(ctx, "confirm", err)
	}
	if row == nil || row.Owner != l.owner || row.Released || row.Generation < mine {
		l.markLost()
		return l.lostError("confirm", row)
	}
	return nil
}

package dynamolease

import (
	"context"
	"fmt"
	"time"
)

// VouchedTaker is a Table that takes a lease in strict mode in one request
// (SPEC §3, "Recorded key states"): it writes r if no row (r.Path, r.ETag)
// exists, or over one that is released and records r.ETag's own version,
// whatever its generation. Any such row says the key is at that version
// and nobody holds it, so taking it needs no generation seen first; r
// carries a fresh random generation, which no waiter's takeover names.
// It returns the row it replaced (nil when it created one), or
// ErrConditionFailed and the current row when neither held.
type VouchedTaker interface {
	CreateOrTakeVouched(ctx context.Context, r Record) (replaced *Record, err error)
}

// CreateOrTakeVouched calls t's CreateOrTakeVouched, or answers
// ErrKeyStatesUnsupported for a table without one.
func CreateOrTakeVouched(ctx context.Context, t Table, r Record) (*Record, error) {
	if vt, ok := t.(VouchedTaker); ok {
		return vt.CreateOrTakeVouched(ctx, r)
	}
	return nil, fmt.Errorf("create or take %q %q: %w", r.Path, r.ETag, ErrKeyStatesUnsupported)
}

// VouchesForItself reports whether a stored row vouches for its own
// version: the condition of CreateOrTakeVouched, for Tables that check it
// in code.
func VouchesForItself(row Record) bool {
	return row.Released && row.Unreadable == "" && row.KeyState != nil && row.KeyState.version() == row.ETag
}

// OwnVersionState is the key state a row of etag vouches for: absence for
// "*", the ETag otherwise.
func OwnVersionState(etag string) KeyState {
	if etag == "*" {
		return KeyState{}
	}
	return KeyState{Exists: true, ETag: etag}
}

// createOrTake is create for a recorded attempt on a table that takes a
// vouched row in one request; ok false when the table has none.
func (c *Committer) createOrTake(ctx context.Context, a *attempt) (lease *Lease, existing *Record, ok bool, err error) {
	if c.vouchedTakeRefused.Load() {
		return nil, nil, false, nil
	}
	r := c.record(a, firstGeneration(), false)
	sentAt := time.Now()
	call, done := tableCall(ctx)
	replaced, err := CreateOrTakeVouched(call, c.table, r)
	done()
	switch {
	case isKeyStatesUnsupported(err):
		c.vouchedTakeRefused.Store(true)
		return nil, nil, false, nil
	case err == nil || wroteIt(replaced, r):
		lease := c.newLease(a, r, sentAt)
		if replaced == nil || wroteIt(replaced, r) {
			lease.createdBy = time.Now()
		} else {
			lease.found = trustedKeyState(replaced)
			lease.carried = c.sealedReceiptOf(replaced)
			c.opts.Observer.TookOver(true)
		}
		return lease, nil, true, nil
	case isConditionFailed(err):
		return nil, replaced, true, nil
	}
	c.abandoned.add(r) // the write may still land, held by nobody
	return nil, nil, true, c.storeError(ctx, "create", err)
}

package dynamolease

import "context"

// ReleaseAll releases every lease of leases as Release does, in as few
// table writes as the table allows (a BatchTable takes up to MaxBatch rows
// in one); errs[i] is what Release would have returned for leases[i]. Each
// lease's release waits for a renewal of it in flight, as Release does, so
// it writes the generation that renewal left.
func (c *Committer) ReleaseAll(ctx context.Context, leases []*Lease) []error {
	errs := make([]error, len(leases))
	bt, batched := c.table.(BatchTable)
	if !batched {
		for i, l := range leases {
			errs[i] = l.Release(ctx)
		}
		return errs
	}
	size := max(bt.MaxBatch(), 1)
	for start := 0; start < len(leases); start += size {
		end := min(start+size, len(leases))
		c.releaseBatch(ctx, bt, leases[start:end], errs[start:end])
	}
	return errs
}

// pendingRelease is one lease of a batch release, its opMu held.
type pendingRelease struct {
	i      int
	l      *Lease
	record Record
	seen   uint64
}

// releaseBatch releases leases in one ReplaceEach. It holds each lease's
// opMu for the write, so no renewal of it overtakes the release.
func (c *Committer) releaseBatch(ctx context.Context, bt BatchTable, leases []*Lease, errs []error) {
	var pending []pendingRelease
	lazy := releaseNotAwaited(ctx)
	for i, l := range leases {
		l.opMu.Lock()
		if l.released {
			l.opMu.Unlock()
			continue
		}
		l.released = true
		close(l.done)
		if l.isLost() {
			errs[i] = l.lostError("release", nil)
			l.leaveLocal()
			l.opMu.Unlock()
			continue
		}
		mine := l.Generation()
		pending = append(pending, pendingRelease{i: i, l: l, record: l.record(mine, true), seen: mine})
		lazy = lazy && !c.local.contended(l.state)
	}
	if len(pending) == 0 {
		return
	}
	defer func() {
		for _, p := range pending {
			// Wake local waiters only after the row says released.
			p.l.leaveLocal()
			p.l.opMu.Unlock()
		}
	}()
	rs, seen := make([]Record, len(pending)), make([]uint64, len(pending))
	for j, p := range pending {
		rs[j], seen[j] = p.record, p.seen
	}
	writeCtx := ctx
	if lazy {
		writeCtx = withLazyWrite(ctx)
	}
	written, current, err := bt.ReplaceEach(writeCtx, rs, seen)
	for j, p := range pending {
		switch {
		case j < len(written) && written[j]:
		case j < len(current) && wroteIt(current[j], p.record):
		case err != nil:
			errs[p.i] = c.storeError(ctx, "release", err)
		default:
			var cur *Record
			if j < len(current) {
				cur = current[j]
			}
			errs[p.i] = p.l.releaseLost(cur)
		}
	}
}

// releaseLost records that a release found the row taken over.
func (l *Lease) releaseLost(current *Record) error {
	l.markLost()
	return l.lostError("release", current)
}

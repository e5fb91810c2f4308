package dynamolease

import "context"

// ReleaseAll releases every lease of leases as Release does, in as few
// table writes as the table allows (a BatchTable takes up to MaxBatch rows
// in one); errs[i] is what Release would have returned for leases[i]. Each
// lease's release waits for a renewal of it in flight, as Release does, so
// it writes the generation that renewal left.
func (c *Committer) ReleaseAll(ctx context.Context, leases []*Lease) []error {
	return c.releaseAll(ctx, leases, false)
}

// ReleaseAllNotAwaited is ReleaseAll for a caller that does not wait on it
// to go on, as Lease.ReleaseNotAwaited is Release's: unless another
// goroutine of this process waits for one of a batch's rows, the batch may
// wait briefly to share the table's next commit (LazyBatchReplacer).
func (c *Committer) ReleaseAllNotAwaited(ctx context.Context, leases []*Lease) []error {
	return c.releaseAll(ctx, leases, true)
}

func (c *Committer) releaseAll(ctx context.Context, leases []*Lease, notAwaited bool) []error {
	errs := make([]error, len(leases))
	bt, batched := c.table.(BatchTable)
	if !batched {
		for i, l := range leases {
			if notAwaited {
				errs[i] = l.ReleaseNotAwaited(ctx)
			} else {
				errs[i] = l.Release(ctx)
			}
		}
		return errs
	}
	size := max(bt.MaxBatch(), 1)
	for start := 0; start < len(leases); start += size {
		end := min(start+size, len(leases))
		c.releaseBatch(ctx, bt, leases[start:end], errs[start:end], notAwaited)
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
func (c *Committer) releaseBatch(ctx context.Context, bt BatchTable, leases []*Lease, errs []error, notAwaited bool) {
	var pending []pendingRelease
	lazy := notAwaited
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
		r := l.record(mine, true)
		r.Receipt = l.releasedReceipt() // a receipt outlives holders that do not commit (receipt.go)
		pending = append(pending, pendingRelease{i: i, l: l, record: r, seen: mine})
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
	replaceEach := bt.ReplaceEach
	if lazy {
		// Neither the caller nor another goroutine here waits for these
		// writes: the table may take its time.
		replaceEach = func(ctx context.Context, rs []Record, seen []uint64) ([]bool, []*Record, error) {
			return ReplaceEachLazily(ctx, bt, rs, seen)
		}
	}
	call, done := tableCall(ctx)
	written, current, err := replaceEach(call, rs, seen)
	done()
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

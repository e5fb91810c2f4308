package dynamolease

import (
	"context"
	"strconv"
	"time"
)

// LeaseRequest is one lease of an AcquireMany: AcquireAfterRead's
// arguments.
type LeaseRequest struct {
	Path, ETag string
	ReadAt     time.Time
	Check      func(context.Context) error
}

// AcquireMany takes the leases of reqs in their order, which must be the
// protocol's key order with no key twice (a DeleteObjects' leases, SPEC
// §3). Where the table is a BatchTable, the rows nobody has yet are created
// in batches of up to MaxBatch rows (one round trip each); a row that
// exists, or that another goroutine of this process has, is taken by
// one(ctx, i), the caller's single-key acquisition with its wait budget,
// before any later row is created, so the key order holds. Without a
// BatchTable every lease is one(ctx, i).
//
// A created row skips its re-check under the same condition as Acquire's
// (recheckNeedless: its batch was answered within one lease timeout of
// reqs[i].ReadAt); otherwise reqs[i].Check runs under the lease, and if it
// fails the lease is released and its error returned. leases[i] is nil
// exactly when errs[i] is not.
func (c *Committer) AcquireMany(ctx context.Context, reqs []LeaseRequest, one func(ctx context.Context, i int) (*Lease, error)) (leases []*Lease, errs []error) {
	leases, errs = make([]*Lease, len(reqs)), make([]error, len(reqs))
	bt, batched := c.table.(BatchTable)
	// one(ctx, i) may wait a whole wait budget, longer than a lease: the
	// leases taken before it are renewed meanwhile, or another process
	// takes their rows over. The caller renews them once they are returned.
	var stops []func()
	renewed := 0
	renewTaken := func(upTo int) {
		for ; renewed < upTo; renewed++ {
			if leases[renewed] != nil {
				stops = append(stops, leases[renewed].KeepAlive(ctx))
			}
		}
	}
	defer func() {
		for _, stop := range stops {
			stop()
		}
	}()
	for i := 0; i < len(reqs); {
		if err := ctx.Err(); err != nil {
			for ; i < len(reqs); i++ {
				errs[i] = err
			}
			break
		}
		var batch []batchEntry
		if batched {
			batch = c.joinBatch(reqs[i:], max(bt.MaxBatch(), 1))
		}
		if len(batch) == 0 {
			renewTaken(i)
			leases[i], errs[i] = one(ctx, i)
			i++
			continue
		}
		created, existing, err := c.createBatch(ctx, bt, batch)
		for j := range batch {
			if j < created {
				leases[i+j] = batch[j].lease
			} else if err != nil {
				errs[i+j] = err
			}
		}
		c.recheckBatch(ctx, reqs[i:i+created], leases[i:i+created], errs[i:i+created])
		switch {
		case err != nil:
			i += len(batch)
		case created < len(batch):
			// reqs[i+created]'s row exists: wait for it before going on.
			i += created
			if leases[i] = c.unsafeTakeHeldRow(ctx, reqs[i], existing); leases[i] == nil {
				renewTaken(i)
				leases[i], errs[i] = one(ctx, i)
			}
			i++
		default:
			i += created
		}
	}
	return leases, errs
}

// batchEntry is one row of a batch create, with its turn in the local
// queue.
type batchEntry struct {
	a     *attempt
	me    *turn
	lease *Lease // set once created
}

// joinBatch takes the local turns of up to n requests from the start of
// reqs, stopping at the first key another goroutine of this process is
// acquiring or holding: that one waits its turn in one().
func (c *Committer) joinBatch(reqs []LeaseRequest, n int) []batchEntry {
	var batch []batchEntry
	for _, req := range reqs[:min(n, len(reqs))] {
		a := &attempt{
			key:    localKey{req.Path, req.ETag},
			owner:  c.ownerPrefix + "/" + strconv.FormatUint(c.attempts.Add(1), 10),
			check:  ignoringRecords(req.Check),
			readAt: req.ReadAt,
		}
		a.state = c.local.join(a.key)
		me := &turn{}
		if ok, _, _ := c.local.takeTurn(a.state, me); !ok {
			c.local.leave(a.key, a.state)
			break
		}
		batch = append(batch, batchEntry{a: a, me: me})
	}
	return batch
}

// createBatch creates the batch's rows in order up to the first that
// exists, and returns how many it created, each entry's lease set, and the
// row it stopped at (when read). Entries
// not created leave the local queue; on a table error their rows may still
// land, so they are remembered to be settled (abandoned.go).
func (c *Committer) createBatch(ctx context.Context, bt BatchTable, batch []batchEntry) (int, *Record, error) {
	rs := make([]Record, len(batch))
	for j, e := range batch {
		rs[j] = c.record(e.a, firstGeneration(), false)
	}
	start := time.Now()
	call, done := tableCall(ctx)
	created, existing, err := bt.CreateInOrder(call, rs)
	done()
	createdBy := time.Now()
	created = min(max(created, 0), len(batch))
	for j := range batch {
		e := &batch[j]
		if j < created {
			e.lease = c.newLease(e.a, rs[j], start)
			e.lease.createdBy = createdBy
			e.lease.turn = e.me
			c.local.holding(e.a.state, e.me, e.lease.held())
			c.opts.Observer.AcquireDone(createdBy.Sub(start), nil)
			continue
		}
		c.local.endTurn(e.a.state, e.me)
		c.local.leave(e.a.key, e.a.state)
		if err != nil {
			c.abandoned.add(rs[j])
		}
	}
	if err != nil {
		err = c.storeError(ctx, "create", err)
		for range batch[created:] {
			c.opts.Observer.AcquireDone(createdBy.Sub(start), err)
		}
	}
	return created, existing, err
}

// recheckBatch runs the re-check of each created lease that needs one
// (SPEC §3 step 4); a lease whose re-check fails is released, and its
// error takes its place.
func (c *Committer) recheckBatch(ctx context.Context, reqs []LeaseRequest, leases []*Lease, errs []error) {
	var failed []*Lease
	for j, l := range leases {
		a := &attempt{check: ignoringRecords(reqs[j].Check), readAt: reqs[j].ReadAt}
		if a.check == nil || c.recheckNeedless(a, l) {
			continue
		}
		if err := a.runCheck(ctx); err != nil {
			failed = append(failed, l)
			leases[j], errs[j] = nil, err
		}
	}
	if len(failed) == 0 {
		return
	}
	relCtx, cancel := c.cleanupContext(ctx)
	defer cancel()
	for _, err := range c.ReleaseAll(relCtx, failed) {
		if err != nil {
			c.log.Warn().Err(err).Msg("release after a failed precondition re-check failed; the lease expires on its own")
		}
	}
}

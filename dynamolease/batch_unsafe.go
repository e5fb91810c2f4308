//go:build s3cond_unsafe_batch_takes_held_rows

package dynamolease

import (
	"context"
	"strconv"
	"time"
)

// unsafeTakeHeldRow, only in a build with the tag
// s3cond_unsafe_batch_takes_held_rows, makes AcquireMany take a row its
// batch found existing over at once, held or not, as if the batch had
// created it (so its re-check is skipped too), instead of waiting for it.
// It is the linearizability suite's negative control for batches
// (e2e/linearizability, TestNegativeControlBatchTakingHeldRows): the
// DeleteObjects history must see the difference the per-row wait makes.
// Never ship a build with it.
func (c *Committer) unsafeTakeHeldRow(ctx context.Context, req LeaseRequest, existing *Record) *Lease {
	a := &attempt{
		key:    localKey{req.Path, req.ETag},
		owner:  c.ownerPrefix + "/" + strconv.FormatUint(c.attempts.Add(1), 10),
		check:  ignoringRecords(req.Check),
		readAt: req.ReadAt,
	}
	if existing == nil {
		var err error
		if existing, err = c.get(ctx, a); err != nil || existing == nil {
			return nil
		}
	}
	a.state = c.local.join(a.key)
	lease, _, err := c.takeOver(ctx, a, existing, existing.Released)
	if err != nil || lease == nil {
		c.local.leave(a.key, a.state)
		return nil
	}
	lease.createdBy = time.Now()
	return lease
}

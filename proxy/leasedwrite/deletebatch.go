package leasedwrite

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/internal/s3xml"
	"github.com/s3cond/s3cond/precondition"
	"github.com/s3cond/s3cond/s3err"
)

// deleteStateReads bounds the HEADs a leased DeleteObjects has in flight:
// its keys' states are read together, not one after another, so a request
// of 1 000 keys to a store 20 ms away reads them in about a second and
// every row it then creates is created within one lease timeout of its
// key's read (the re-check skip, SPEC §3 step 4).
const deleteStateReads = 32

// deleteRead is the state read of one key of a leased DeleteObjects.
type deleteRead struct {
	state precondition.ObjectState
	at    time.Time
	etag  string // the lease's ETag: the version the entries would delete
}

// leaseDeleteKeys takes the leases of keys (SPEC §3 for DeleteObjects):
//   - every key's state is read first (deleteStateReads at a time); a key
//     whose entries all fail on it is answered at once and takes no lease;
//   - the leases are then taken in key order, the rows nobody has in
//     batches (dynamolease.AcquireMany: about one lease round trip per
//     100 keys), a row someone has by the single-key wait;
//   - the wait budget bounds only those waits: it starts at the first of
//     them, all of them share it, and a key still held when it ends is
//     answered 409. Taking uncontended keys never counts against it.
//
// It returns the keys it holds the lease of, g keeping each; the others
// are answered in result. A request whose client left returns its context's
// error.
func (w *Writer) leaseDeleteKeys(req Request, g *guard, keys []*deleteKey, result *s3xml.DeleteResult) ([]*deleteKey, error) {
	ctx := req.Ctx
	reads, readErrs := readDeleteStates(req, keys)
	var wanted []*deleteKey
	var reqs []dynamolease.LeaseRequest
	for i, k := range keys {
		if readErrs[i] != nil {
			k.answerAll(readErrs[i], result)
			continue
		}
		wanted = append(wanted, k)
		reqs = append(reqs, dynamolease.LeaseRequest{Path: k.leasePath, ETag: reads[i].etag, ReadAt: reads[i].at,
			Check: leaseCheck(req, k.target, k.conds, reads[i].etag)})
		k.read = reads[i]
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	budget := &sharedBudget{parent: ctx, d: w.leases.Options().WaitBudget}
	defer budget.end()
	one := func(_ context.Context, i int) (*dynamolease.Lease, error) {
		k := wanted[i]
		return w.acquireLease(budget.ctx(), req, k.target, k.conds, &stateRead{state: k.read.state, at: k.read.at})
	}
	leases, errs := w.leases.AcquireMany(ctx, reqs, one)
	var held []*deleteKey
	for i, k := range wanted {
		lease, err := leases[i], errs[i]
		if errors.Is(err, errETagMoved) {
			// A batch-created row whose re-check found another version
			// the entries still hold on: lease that one, as Acquire's
			// callers do (out of key order, within the budget).
			lease, err = w.acquireLease(budget.ctx(), req, k.target, k.conds, nil)
		}
		if err == nil {
			// Every lease taken goes to g, even once the client has left:
			// g.end releases them.
			err = g.hold(lease)
		}
		if err != nil {
			if ctx.Err() != nil {
				continue // nobody is listening
			}
			if budget.spent() {
				err = s3err.Wrap(s3err.ConditionalRequestConflict, context.DeadlineExceeded)
			}
			k.answerAll(leaseError(err), result)
			continue
		}
		k.lease = lease
		held = append(held, k)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return held, nil
}

// readDeleteStates reads every key's state, deleteStateReads at a time,
// and evaluates its entries on it: errs[i] answers key i when they all
// fail (or the read did).
func readDeleteStates(req Request, keys []*deleteKey) ([]deleteRead, []error) {
	reads, errs := make([]deleteRead, len(keys)), make([]error, len(keys))
	sem := make(chan struct{}, deleteStateReads)
	var wg sync.WaitGroup
	for i, k := range keys {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			at := time.Now()
			state, err := req.State.Head(req.Ctx, k.target)
			if err == nil {
				err = k.conds.Evaluate(state)
			}
			if err != nil {
				errs[i] = err
				return
			}
			reads[i] = deleteRead{state: state, at: at, etag: k.conds.LeaseETag(state)}
		}()
	}
	wg.Wait()
	return reads, errs
}

// sharedBudget is the wait budget of one DeleteObjects' contended keys: it
// starts when the first of them starts waiting.
type sharedBudget struct {
	parent context.Context
	d      time.Duration
	c      context.Context
	cancel context.CancelFunc
}

func (b *sharedBudget) ctx() context.Context {
	if b.c == nil {
		b.c, b.cancel = context.WithTimeout(b.parent, b.d)
	}
	return b.c
}

// spent reports whether the budget started and ran out.
func (b *sharedBudget) spent() bool { return b.c != nil && b.c.Err() != nil && b.parent.Err() == nil }

func (b *sharedBudget) end() {
	if b.cancel != nil {
		b.cancel()
	}
}

package leasedwrite

import (
	"context"
	"errors"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/precondition"
	"github.com/s3cond/s3cond/s3err"
)

// errETagMoved means the object changed between choosing a lease and
// holding it, for a condition (If-Match: * or a list) that still holds: the
// write must lease the new ETag instead, or it could interleave with a
// compare-and-swap on that ETag.
var errETagMoved = errors.New("object ETag changed while the lease was sought")

// maxETagMoves bounds how often a write follows a moving ETag before it
// answers 409 like a conflicting write in progress.
const maxETagMoves = 5

// acquireGuarded takes the write's lease for g, lengthened to the store's
// work (sizing, nil for none; size.go), with the half-lease rule (SPEC
// §3 step 5: final bytes only while at least half the lease remains,
// otherwise renew first); then g keeps it alive until the write ends.
func (w *Writer) acquireGuarded(req Request, g *guard, cond Condition, known *stateRead, sizing *leaseSizing) error {
	start := time.Now()
	lease, err := w.acquireLease(req.Ctx, req, req.Target, cond, known)
	if req.LeaseWait != nil {
		req.LeaseWait(time.Since(start))
	}
	if err != nil {
		return err
	}
	if err := w.finishLeftRenames(req, lease, cond); err != nil {
		w.releaseLease(context.Background(), lease)
		return err
	}
	if err := sizing.extend(req.Ctx, lease); err != nil {
		w.releaseLease(context.Background(), lease)
		return err
	}
	if err := w.ensureHalfLease(req.Ctx, lease); err != nil {
		w.releaseLease(context.Background(), lease)
		return err
	}
	return g.hold(lease)
}

// ensureHalfLease renews l unless at least half of its length remains
// (SPEC §3 step 5).
func (w *Writer) ensureHalfLease(ctx context.Context, l *dynamolease.Lease) error {
	if l.Remaining() >= l.Timeout()/2 {
		return nil
	}
	if err := l.Renew(ctx); err != nil {
		if errors.Is(err, dynamolease.ErrLeaseLost) {
			return s3err.Wrap(s3err.ConditionalRequestConflict, err)
		}
		return s3err.Wrap(s3err.ServiceUnavailable, err)
	}
	if l.Remaining() < l.Timeout()/2 {
		// The renewal itself took more than half the lease: the table is
		// too slow for the final action to be safe.
		return s3err.Newf(s3err.ServiceUnavailable, "The lease store is too slow to keep the lease on this key; retry.")
	}
	return nil
}

// acquireLease takes the lease for a conditional write on t (SPEC §3 steps
// 2–4). known, if set, is a state just read, saving one HEAD, and the lease
// sought beside it.
func (w *Writer) acquireLease(ctx context.Context, req Request, t operation.Target, cond Condition, known *stateRead) (*dynamolease.Lease, error) {
	if known != nil && known.deferred {
		return w.acquireFirst(ctx, req, cond)
	}
	for moves := 0; ; moves++ {
		var state precondition.ObjectState
		readAt := time.Now()
		if known != nil && moves == 0 {
			if known.early != nil {
				lease, err := known.early.wait()
				if err == nil {
					return lease, nil
				}
				if !errors.Is(err, errETagMoved) {
					return nil, leaseError(err)
				}
				continue
			}
			state, readAt = known.state, known.at
		} else {
			s, err := req.State.Head(ctx, t)
			if err != nil {
				return nil, err
			}
			state = s
		}
		if err := cond.Evaluate(state); err != nil {
			return nil, err
		}
		etag := cond.LeaseETag(state)
		lease, err := w.leases.AcquireAfterRead(ctx, req.LeasePath(t), etag, readAt, leaseCheck(req, t, cond, etag))
		switch {
		case err == nil:
			return lease, nil
		case errors.Is(err, errETagMoved) && moves < maxETagMoves:
			continue
		}
		return nil, leaseError(err)
	}
}

// leaseCheck is the precondition's re-check against the store for a
// lease on etag (SPEC §3 steps 3 and 4).
func leaseCheck(req Request, t operation.Target, cond Condition, etag string) func(context.Context) error {
	return func(ctx context.Context) error {
		s, err := req.State.Head(ctx, t)
		if err != nil {
			return err
		}
		if err := cond.Evaluate(s); err != nil {
			return err
		}
		if !cond.Covers(etag, s) {
			return errETagMoved
		}
		return nil
	}
}

// leaseError maps lease failures to what the client sees: the lease store's
// failures arrive as the protocol's errors (dynamolease/refusal.go), so this
// is the one place that turns them into S3 answers.
func leaseError(err error) error {
	var s3e *s3err.Error
	var refusal *dynamolease.Refusal
	var storeErr *dynamolease.StoreError
	switch {
	case errors.As(err, &s3e):
		return s3e
	case errors.Is(err, errETagMoved), errors.Is(err, dynamolease.ErrWaitBudgetExceeded):
		e := s3err.New(s3err.ConditionalRequestConflict)
		e.Cause = err
		return e
	case errors.As(err, &refusal):
		code := s3err.ServiceUnavailable
		if errors.Is(refusal.Kind, dynamolease.ErrUnsupported) {
			// The request can never succeed: retrying is pointless.
			code = s3err.NotImplemented
		}
		e := s3err.Newf(code, "%s", refusal.Reason)
		e.Cause = err
		return e
	case errors.As(err, &storeErr):
		e := s3err.Newf(s3err.ServiceUnavailable, "The lease store is unavailable; conditional writes are refused until it is back.")
		e.Cause = err
		return e
	}
	return s3err.Wrap(s3err.InternalError, err)
}

package leasedwrite

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/s3err"
)

// maxLeaseLength bounds a sized lease where no lease store is configured:
// the longest a lease row may carry (24 h). With one, the bound is its
// lease.max_sized_timeout (sizedLeaseCap).
const maxLeaseLength = dynamolease.MaxSizedTimeout

// sizedLeaseCap is the longest lease a sized write gets
// (lease.max_sized_timeout): every wait that stands for rows nobody can
// read waits it × skew, so no row may carry more. Work beyond it is guarded
// by renewals while its holder lives; a vanished holder's row is taken over
// after the cap × skew, and the store must be done by then.
func (w *Writer) sizedLeaseCap() time.Duration {
	if w.leases == nil {
		return maxLeaseLength
	}
	return w.leases.Options().SizedLeaseCap
}

// leaseSizing measures the work the store does for a leased write once it
// is sent, to size its lease (docs/spec.md §3): a CopyObject copies its
// source, a CompleteMultipartUpload assembles its parts, and the store goes
// on doing so after the s3cond that asked is gone (killed, paused, cut
// off). The row must then stay held until that work could have ended, in
// every process of a fleet: the lease is extended to lease.timeout plus
// the work's bytes at lease.min_store_mib_per_second, written on the row.
// The measure (a HEAD of the source; ListParts, one request per thousand
// parts) runs beside the destination's HEAD and the lease, so it adds no
// round trip of its own; the extension adds one lease write, for large
// work only (leaseLengthFor). Other writes send their bytes themselves and
// keep lease.timeout.
type leaseSizing struct {
	done   chan struct{}
	length time.Duration
	err    error
}

// startSizing starts measuring req's store work; nil when its write has none.
func (w *Writer) startSizing(req Request) *leaseSizing {
	if req.StoreWork > 0 {
		// Known up front: nothing to measure.
		s := &leaseSizing{done: make(chan struct{}), length: w.leaseLengthFor(req.StoreWork)}
		close(s.done)
		return s
	}
	if req.Op != operation.CopyObject && req.Op != operation.CompleteMultipartUpload {
		return nil
	}
	s := &leaseSizing{done: make(chan struct{})}
	go func() {
		defer close(s.done)
		var work int64
		if req.Op == operation.CopyObject {
			work, s.err = req.State.CopySourceSize(req.Ctx)
		} else {
			work, s.err = req.State.PartsTotal(req.Ctx)
		}
		if errors.Is(s.err, ErrPartsUnlisted) {
			// The completion still runs, under the plain lease: it is sent
			// with at least half of it left (SPEC §3 step 5), which the
			// store's assembly must fit in.
			s.err = nil
			if !w.partsUnlistedLogged.Swap(true) {
				w.log.Warn().Str("backend", req.Backend).
					Msg("the backend does not implement ListParts: conditional CompleteMultipartUpload leases are not sized to their parts, and its assembly must finish within lease.timeout / 2")
			}
		}
		s.length = w.leaseLengthFor(work)
		if s.err == nil && s.length == w.sizedLeaseCap() {
			w.log.Warn().Str("request_id", req.ID).Str("operation", req.Op.String()).Int64("work_bytes", work).
				Dur("lease", s.length).
				Msg("store work longer than lease.max_sized_timeout at lease.min_store_mib_per_second; if this s3cond vanishes, the key may be taken over before the store is done")
		}
	}()
	return s
}

// extend lengthens l to the measured work once the measure is in; a nil
// sizing leaves l as it is.
func (s *leaseSizing) extend(ctx context.Context, l *dynamolease.Lease) error {
	if s == nil {
		return nil
	}
	select {
	case <-s.done:
	case <-ctx.Done():
		return s3err.Wrap(s3err.InternalError, ctx.Err())
	}
	if s.err != nil {
		return s.err
	}
	if err := l.Extend(ctx, s.length); err != nil {
		if errors.Is(err, dynamolease.ErrLeaseLost) {
			return s3err.Wrap(s3err.ConditionalRequestConflict, err)
		}
		return s3err.Wrap(s3err.ServiceUnavailable, err)
	}
	return nil
}

// leaseLengthFor is lease.timeout plus the time the store takes for work
// bytes at the assumed minimum throughput, or lease.timeout alone when that
// time is at most a quarter of it: a write goes out only while half its
// lease remains (SPEC §3 step 5), and no process takes the row over sooner
// than lease.timeout after its last write, so the store has half the lease
// for it, and a quarter to spare.
func (w *Writer) leaseLengthFor(work int64) time.Duration {
	if work <= 0 {
		return w.leaseTimeout
	}
	seconds := float64(work) / w.minStoreThroughput
	if seconds <= (w.leaseTimeout / 4).Seconds() {
		return w.leaseTimeout
	}
	limit := w.sizedLeaseCap()
	if seconds >= limit.Seconds() {
		return limit
	}
	return min(w.leaseTimeout+time.Duration(math.Ceil(seconds*float64(time.Second))), limit)
}

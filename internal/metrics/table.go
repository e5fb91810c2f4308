package metrics

import (
	"context"
	"errors"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
)

// instrumentedTable times every call to a lease table and counts failures.
type instrumentedTable struct {
	next dynamolease.Table
	m    *Metrics
}

// InstrumentTable wraps t so that its calls feed the lease store metrics.
func (m *Metrics) InstrumentTable(t dynamolease.Table) dynamolease.Table {
	return instrumentBatches(&instrumentedTable{next: t, m: m})
}

func (t *instrumentedTable) observe(op string, start time.Time, err error) {
	t.m.leaseStoreDurations.get(op).Observe(time.Since(start).Seconds())
	// A conditional write that lost is the protocol working, not the store failing.
	if err != nil && !errors.Is(err, dynamolease.ErrConditionFailed) {
		t.m.leaseStoreErrors.WithLabelValues(op).Inc()
	}
}

func (t *instrumentedTable) Create(ctx context.Context, r dynamolease.Record) (*dynamolease.Record, error) {
	start := time.Now()
	existing, err := t.next.Create(ctx, r)
	t.observe("create", start, err)
	return existing, err
}

func (t *instrumentedTable) Replace(ctx context.Context, r dynamolease.Record, seen uint64) (*dynamolease.Record, error) {
	start := time.Now()
	current, err := t.next.Replace(ctx, r, seen)
	t.observe("replace", start, err)
	return current, err
}

// ReplaceLazily implements dynamolease.LazyReplacer, passing the hint on
// to the table beneath.
func (t *instrumentedTable) ReplaceLazily(ctx context.Context, r dynamolease.Record, seen uint64) (*dynamolease.Record, error) {
	start := time.Now()
	current, err := dynamolease.ReplaceLazily(ctx, t.next, r, seen)
	t.observe("replace", start, err)
	return current, err
}

func (t *instrumentedTable) Get(ctx context.Context, path, etag string) (*dynamolease.Record, error) {
	start := time.Now()
	r, err := t.next.Get(ctx, path, etag)
	t.observe("get", start, err)
	return r, err
}

// CreateOrTakeVouched implements dynamolease.VouchedTaker where the table
// beneath does.
func (t *instrumentedTable) CreateOrTakeVouched(ctx context.Context, r dynamolease.Record) (*dynamolease.Record, error) {
	start := time.Now()
	replaced, err := dynamolease.CreateOrTakeVouched(ctx, t.next, r)
	if !errors.Is(err, dynamolease.ErrKeyStatesUnsupported) {
		t.observe("create", start, err)
	}
	return replaced, err
}

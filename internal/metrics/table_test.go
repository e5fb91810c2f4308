package metrics

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/s3cond/s3cond/dynamolease"
)

// lazyTable stands for the embedded bolt table, the one store that may hold
// back a write nobody waits for: it counts the writes it was allowed to.
type lazyTable struct {
	*dynamolease.MemTable
	lazy int
}

func (l *lazyTable) ReplaceLazily(ctx context.Context, r dynamolease.Record, seen uint64) (*dynamolease.Record, error) {
	l.lazy++
	return l.MemTable.Replace(ctx, r, seen)
}

// The instrumented table passes the lazy hint of a release nobody waits
// for on to the table beneath, and times it as a replace.
func TestInstrumentedTablePassesLazyWritesOn(t *testing.T) {
	m := New(prometheus.NewRegistry())
	inner := &lazyTable{MemTable: dynamolease.NewMemTable()}
	tbl := m.InstrumentTable(inner)
	ctx := context.Background()
	r := dynamolease.Record{Path: "b/k", ETag: "*", Timeout: time.Second}
	if _, err := tbl.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	r.Released = true
	if _, err := dynamolease.ReplaceLazily(ctx, tbl, r, 0); err != nil {
		t.Fatal(err)
	}
	if inner.lazy != 1 {
		t.Fatalf("the table beneath got %d lazy writes, want 1", inner.lazy)
	}
	if got := testutil.CollectAndCount(m.leaseStoreDuration); got != 2 {
		t.Errorf("timed %d operations' series, want create and replace", got)
	}
}

// lazyBatchTable stands for the embedded bolt table's batches: it counts
// the batch writes it was allowed to hold back.
type lazyBatchTable struct {
	*dynamolease.MemTable
	lazy int
}

func (l *lazyBatchTable) ReplaceEachLazily(ctx context.Context, rs []dynamolease.Record, seen []uint64) ([]bool, []*dynamolease.Record, error) {
	l.lazy++
	return l.MemTable.ReplaceEach(ctx, rs, seen)
}

// The instrumented table is a BatchTable when the table beneath is one (a
// DeleteObjects then takes its leases many rows per call), times each batch
// as one call, and passes the lazy hint of a batch release nobody waits for
// on to the table beneath.
func TestInstrumentedTablePassesBatchesOn(t *testing.T) {
	m := New(prometheus.NewRegistry())
	inner := &lazyBatchTable{MemTable: dynamolease.NewMemTable()}
	tbl, ok := m.InstrumentTable(inner).(dynamolease.BatchTable)
	if !ok {
		t.Fatal("the instrumented table of a BatchTable is not one")
	}
	if _, ok := m.InstrumentTable(plainTable{dynamolease.NewMemTable()}).(dynamolease.BatchTable); ok {
		t.Fatal("the instrumented table of a plain Table claims batches")
	}
	ctx := context.Background()
	rs := []dynamolease.Record{
		{Path: "b/k1", ETag: "*", Timeout: time.Second},
		{Path: "b/k2", ETag: "*", Timeout: time.Second},
	}
	if created, _, err := tbl.CreateInOrder(ctx, rs); err != nil || created != 2 {
		t.Fatalf("CreateInOrder = %d, %v", created, err)
	}
	for i := range rs {
		rs[i].Released = true
	}
	written, _, err := dynamolease.ReplaceEachLazily(ctx, tbl, rs, []uint64{0, 0})
	if err != nil || !written[0] || !written[1] {
		t.Fatalf("ReplaceEachLazily = %v, %v", written, err)
	}
	if inner.lazy != 1 {
		t.Fatalf("the table beneath got %d lazy batches, want 1", inner.lazy)
	}
	if got := testutil.CollectAndCount(m.leaseStoreDuration); got != 2 {
		t.Errorf("timed %d operations' series, want create_batch and replace_batch", got)
	}
}

// plainTable hides MemTable's batches.
type plainTable struct{ inner *dynamolease.MemTable }

func (p plainTable) Create(ctx context.Context, r dynamolease.Record) (*dynamolease.Record, error) {
	return p.inner.Create(ctx, r)
}

func (p plainTable) Replace(ctx context.Context, r dynamolease.Record, seen uint64) (*dynamolease.Record, error) {
	return p.inner.Replace(ctx, r, seen)
}

func (p plainTable) Get(ctx context.Context, path, etag string) (*dynamolease.Record, error) {
	return p.inner.Get(ctx, path, etag)
}

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

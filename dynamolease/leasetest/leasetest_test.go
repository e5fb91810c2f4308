package leasetest

import (
	"context"
	"errors"
	"testing"

	"github.com/s3cond/s3cond/dynamolease"
)

// A plain table must not offer batches or vouched takes: a test that
// stands for a row-at-a-time store would otherwise exercise the batch path.
func TestPlainTableHasOnlyTheThreeCalls(t *testing.T) {
	if _, ok := NewPlain(Hooks{}).Store().(dynamolease.BatchTable); ok {
		t.Error("a plain table's store takes batches")
	}
	if _, ok := NewPlain(Hooks{}).Store().(dynamolease.VouchedTaker); ok {
		t.Error("a plain table's store takes vouched rows")
	}
	if _, ok := New(Hooks{}).Store().(dynamolease.BatchTable); !ok {
		t.Error("a full table's store takes no batches")
	}
}

func TestHooksSeeEveryCallAndMaxBatchRefusesLongerBatches(t *testing.T) {
	var seen []string
	refused := errors.New("refused")
	tbl := New(Hooks{MaxBatch: 1,
		Before: func(_ context.Context, c Call) error {
			if c.Op == OpGet {
				return refused
			}
			return nil
		},
		After: func(c Call, _ error) { seen = append(seen, c.Op+" "+c.Path) },
	})
	ctx := context.Background()
	store := tbl.Store()
	if _, err := store.Create(ctx, dynamolease.Record{Path: "b/k", ETag: "*", Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Get(ctx, "b/k", "*"); !errors.Is(err, refused) {
		t.Fatalf("Get = %v, want the hook's error", err)
	}
	if tbl.Row(t, "b/k", "*") == nil {
		t.Fatal("Row does not see the created row")
	}
	rows := []dynamolease.Record{{Path: "b/x", ETag: "*"}, {Path: "b/y", ETag: "*"}}
	if _, _, err := store.(dynamolease.BatchTable).CreateInOrder(ctx, rows); err == nil {
		t.Fatal("a batch of 2 on a table of MaxBatch 1 was taken")
	}
	if len(seen) != 1 || seen[0] != "create b/k" {
		t.Fatalf("After saw %q, want the create alone", seen)
	}
}

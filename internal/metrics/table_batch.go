package metrics

import (
	"context"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
)

// instrumentedBatchTable is an instrumentedTable whose table writes many
// rows per call: each such call is one lease store call (op create_batch
// or replace_batch), however many rows it carries.
type instrumentedBatchTable struct {
	*instrumentedTable
	batch dynamolease.BatchTable
}

// instrumentBatches keeps t's batches, if its table has them.
func instrumentBatches(t *instrumentedTable) dynamolease.Table {
	if bt, ok := t.next.(dynamolease.BatchTable); ok {
		return &instrumentedBatchTable{instrumentedTable: t, batch: bt}
	}
	return t
}

func (t *instrumentedBatchTable) MaxBatch() int { return t.batch.MaxBatch() }

func (t *instrumentedBatchTable) CreateInOrder(ctx context.Context, rs []dynamolease.Record) (int, *dynamolease.Record, error) {
	start := time.Now()
	created, existing, err := t.batch.CreateInOrder(ctx, rs)
	t.observe("create_batch", start, err)
	return created, existing, err
}

func (t *instrumentedBatchTable) ReplaceEach(ctx context.Context, rs []dynamolease.Record, seen []uint64) ([]bool, []*dynamolease.Record, error) {
	start := time.Now()
	written, current, err := t.batch.ReplaceEach(ctx, rs, seen)
	t.observe("replace_batch", start, err)
	return written, current, err
}

// ReplaceEachLazily implements dynamolease.LazyBatchReplacer, passing the
// hint on to the table beneath, and times it as a replace_batch.
func (t *instrumentedBatchTable) ReplaceEachLazily(ctx context.Context, rs []dynamolease.Record, seen []uint64) ([]bool, []*dynamolease.Record, error) {
	start := time.Now()
	written, current, err := dynamolease.ReplaceEachLazily(ctx, t.batch, rs, seen)
	t.observe("replace_batch", start, err)
	return written, current, err
}

package app

import (
	"context"

	"github.com/s3cond/s3cond/dynamolease"
)

// oneBucketBatchTable is a oneBucketTable whose table writes many rows in
// one call, with the same answer for another bucket's leases.
type oneBucketBatchTable struct {
	oneBucketTable
	batch dynamolease.BatchTable
}

// withOneBucketBatches keeps t's batches, if its table has them.
func withOneBucketBatches(t oneBucketTable) dynamolease.Table {
	if bt, ok := t.Table.(dynamolease.BatchTable); ok {
		return oneBucketBatchTable{oneBucketTable: t, batch: bt}
	}
	return t
}

func (t oneBucketBatchTable) MaxBatch() int { return t.batch.MaxBatch() }

func (t oneBucketBatchTable) CreateInOrder(ctx context.Context, rs []dynamolease.Record) (int, *dynamolease.Record, error) {
	created, existing, err := t.batch.CreateInOrder(ctx, rs)
	return created, existing, notImplementedForOtherBuckets(err)
}

func (t oneBucketBatchTable) ReplaceEach(ctx context.Context, rs []dynamolease.Record, seen []uint64) ([]bool, []*dynamolease.Record, error) {
	written, current, err := t.batch.ReplaceEach(ctx, rs, seen)
	return written, current, notImplementedForOtherBuckets(err)
}

package boltstore

import (
	"context"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/s3cond/s3cond/dynamolease"
)

// CreateOrTakeVouched implements dynamolease.VouchedTaker in one commit.
// A row whose TTL has passed counts as absent, as in Create.
func (b *Table) CreateOrTakeVouched(ctx context.Context, r dynamolease.Record) (*dynamolease.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := b.refuseWhileRecovering(); err != nil {
		return nil, err
	}
	var old *dynamolease.Record
	err := b.commits.write(ctx, func(bucket *bolt.Bucket) error {
		old = nil
		k := boltKey(r.Path, r.ETag)
		current, err := decodeBoltRow(r.Path, r.ETag, bucket.Get(k))
		if err != nil {
			return err
		}
		if current != nil && !expired(current, time.Now()) {
			old = current
			if !dynamolease.VouchesForItself(*current) {
				return dynamolease.ErrConditionFailed
			}
		}
		return putBoltRow(bucket, k, r)
	}, false)
	return old, err
}

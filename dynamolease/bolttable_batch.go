package dynamolease

import (
	"context"
	"time"

	bolt "go.etcd.io/bbolt"
)

var _ BatchTable = (*BoltTable)(nil)

// boltBatch is how many rows one BoltTable batch carries: a whole
// DeleteObjects (1000 keys) in one commit.
const boltBatch = 1000

// MaxBatch implements BatchTable.
func (b *BoltTable) MaxBatch() int { return boltBatch }

// CreateInOrder implements BatchTable in one transaction. As Create, a row
// whose TTL has passed counts as absent.
func (b *BoltTable) CreateInOrder(ctx context.Context, rs []Record) (int, *Record, error) {
	if err := ctx.Err(); err != nil {
		return 0, nil, err
	}
	if err := b.refuseWhileRecovering(); err != nil {
		return 0, nil, err
	}
	var (
		created  int
		existing *Record
		rowErr   error // a row that could not be written; those before it were
	)
	err := b.commits.write(ctx, func(bucket *bolt.Bucket) error {
		created, existing, rowErr = 0, nil, nil
		now := time.Now()
		for _, r := range rs {
			k := boltKey(r.Path, r.ETag)
			current, _ := decodeBoltRow(r.Path, r.ETag, bucket.Get(k))
			if current != nil && !expired(current, now) {
				existing = current
				return nil
			}
			if rowErr = putBoltRow(bucket, k, r); rowErr != nil {
				return nil
			}
			created++
		}
		return nil
	}, false)
	if err != nil {
		// The transaction failed as a whole: nothing of it is in the file.
		return 0, nil, err
	}
	return created, existing, rowErr
}

// ReplaceEach implements BatchTable in one transaction; releases nobody
// waits for are lazy writes, as in Replace.
func (b *BoltTable) ReplaceEach(ctx context.Context, rs []Record, seen []uint64) ([]bool, []*Record, error) {
	if err := ctx.Err(); err != nil {
		return make([]bool, len(rs)), make([]*Record, len(rs)), err
	}
	if err := b.refuseWhileRecovering(); err != nil {
		return make([]bool, len(rs)), make([]*Record, len(rs)), err
	}
	var (
		written []bool
		current []*Record
		rowErr  error
	)
	err := b.commits.write(ctx, func(bucket *bolt.Bucket) error {
		written, current, rowErr = make([]bool, len(rs)), make([]*Record, len(rs)), nil
		for i, r := range rs {
			k := boltKey(r.Path, r.ETag)
			row, _ := decodeBoltRow(r.Path, r.ETag, bucket.Get(k))
			if row == nil || row.Generation != seen[i] {
				current[i] = row
				continue
			}
			if err := putBoltRow(bucket, k, r); err != nil {
				rowErr = err
				continue
			}
			written[i] = true
		}
		return nil
	}, isLazyWrite(ctx))
	if err != nil {
		return make([]bool, len(rs)), make([]*Record, len(rs)), err
	}
	return written, current, rowErr
}

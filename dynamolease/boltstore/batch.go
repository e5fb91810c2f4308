package boltstore

import (
	"context"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/s3cond/s3cond/dynamolease"
)

var (
	_ dynamolease.BatchTable        = (*Table)(nil)
	_ dynamolease.LazyBatchReplacer = (*Table)(nil)
)

// boltBatch is how many rows one batch of the lease file carries: a whole
// DeleteObjects (1000 keys) in one commit.
const boltBatch = 1000

// MaxBatch implements dynamolease.BatchTable.
func (b *Table) MaxBatch() int { return boltBatch }

// CreateInOrder implements dynamolease.BatchTable in one transaction. As
// Create, a row whose TTL has passed counts as absent.
func (b *Table) CreateInOrder(ctx context.Context, rs []dynamolease.Record) (int, *dynamolease.Record, error) {
	if err := ctx.Err(); err != nil {
		return 0, nil, err
	}
	if err := b.refuseWhileRecovering(); err != nil {
		return 0, nil, err
	}
	var (
		created  int
		existing *dynamolease.Record
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

// ReplaceEach implements dynamolease.BatchTable in one transaction.
func (b *Table) ReplaceEach(ctx context.Context, rs []dynamolease.Record, seen []uint64) ([]bool, []*dynamolease.Record, error) {
	return b.replaceEach(ctx, rs, seen, false)
}

// ReplaceEachLazily implements dynamolease.LazyBatchReplacer: releases no
// local goroutine waits for may wait briefly to share the next acquire's
// commit, as ReplaceLazily's do (see lazyCommitDelay).
func (b *Table) ReplaceEachLazily(ctx context.Context, rs []dynamolease.Record, seen []uint64) ([]bool, []*dynamolease.Record, error) {
	return b.replaceEach(ctx, rs, seen, true)
}

func (b *Table) replaceEach(ctx context.Context, rs []dynamolease.Record, seen []uint64, lazy bool) ([]bool, []*dynamolease.Record, error) {
	if err := ctx.Err(); err != nil {
		return make([]bool, len(rs)), make([]*dynamolease.Record, len(rs)), err
	}
	if err := b.refuseWhileRecovering(); err != nil {
		return make([]bool, len(rs)), make([]*dynamolease.Record, len(rs)), err
	}
	var (
		written []bool
		current []*dynamolease.Record
		rowErr  error
	)
	err := b.commits.write(ctx, func(bucket *bolt.Bucket) error {
		written, current, rowErr = make([]bool, len(rs)), make([]*dynamolease.Record, len(rs)), nil
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
	}, lazy)
	if err != nil {
		return make([]bool, len(rs)), make([]*dynamolease.Record, len(rs)), err
	}
	return written, current, rowErr
}

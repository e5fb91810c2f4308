package leasetest

import (
	"context"
	"fmt"

	"github.com/s3cond/s3cond/dynamolease"
)

// plainStore is a Table's three calls every store has.
type plainStore struct{ t *Table }

func (s plainStore) Create(ctx context.Context, r dynamolease.Record) (existing *dynamolease.Record, err error) {
	err = s.t.call(ctx, Call{Op: OpCreate, Path: r.Path, ETag: r.ETag, Released: r.Released, Rows: 1}, func() error {
		existing, err = s.t.mem.Create(ctx, r)
		return err
	})
	return existing, err
}

func (s plainStore) Replace(ctx context.Context, r dynamolease.Record, seen uint64) (current *dynamolease.Record, err error) {
	err = s.t.call(ctx, Call{Op: OpReplace, Path: r.Path, ETag: r.ETag, Released: r.Released, Rows: 1}, func() error {
		current, err = s.t.mem.Replace(ctx, r, seen)
		return err
	})
	return current, err
}

func (s plainStore) Get(ctx context.Context, path, etag string) (row *dynamolease.Record, err error) {
	err = s.t.call(ctx, Call{Op: OpGet, Path: path, ETag: etag, Rows: 1}, func() error {
		row, err = s.t.mem.Get(ctx, path, etag)
		return err
	})
	return row, err
}

// fullStore adds the in-memory table's further capabilities.
type fullStore struct{ plainStore }

var (
	_ dynamolease.Table        = plainStore{}
	_ dynamolease.BatchTable   = fullStore{}
	_ dynamolease.VouchedTaker = fullStore{}
	_ dynamolease.PageLister   = fullStore{}
	_ dynamolease.Lister       = fullStore{}
)

func (s fullStore) MaxBatch() int {
	if s.t.hooks.MaxBatch != 0 {
		return s.t.hooks.MaxBatch
	}
	return s.t.mem.MaxBatch()
}

func (s fullStore) overBatch(n int) error {
	if n > s.MaxBatch() {
		return fmt.Errorf("a batch of %d rows, over the store's %d", n, s.MaxBatch())
	}
	return nil
}

func batchCall(op string, rs []dynamolease.Record) Call {
	c := Call{Op: op, Rows: len(rs)}
	if len(rs) > 0 {
		c.Path, c.ETag, c.Released = rs[0].Path, rs[0].ETag, rs[0].Released
	}
	return c
}

func (s fullStore) CreateInOrder(ctx context.Context, rs []dynamolease.Record) (created int, existing *dynamolease.Record, err error) {
	if err := s.overBatch(len(rs)); err != nil {
		return 0, nil, err
	}
	err = s.t.call(ctx, batchCall(OpCreateBatch, rs), func() error {
		created, existing, err = s.t.mem.CreateInOrder(ctx, rs)
		return err
	})
	return created, existing, err
}

func (s fullStore) ReplaceEach(ctx context.Context, rs []dynamolease.Record, seen []uint64) (written []bool, current []*dynamolease.Record, err error) {
	if err := s.overBatch(len(rs)); err != nil {
		return make([]bool, len(rs)), make([]*dynamolease.Record, len(rs)), err
	}
	err = s.t.call(ctx, batchCall(OpReplaceBatch, rs), func() error {
		written, current, err = s.t.mem.ReplaceEach(ctx, rs, seen)
		return err
	})
	if written == nil {
		written, current = make([]bool, len(rs)), make([]*dynamolease.Record, len(rs))
	}
	return written, current, err
}

func (s fullStore) CreateOrTakeVouched(ctx context.Context, r dynamolease.Record) (replaced *dynamolease.Record, err error) {
	err = s.t.call(ctx, Call{Op: OpTakeVouched, Path: r.Path, ETag: r.ETag, Released: r.Released, Rows: 1}, func() error {
		replaced, err = s.t.mem.CreateOrTakeVouched(ctx, r)
		return err
	})
	return replaced, err
}

func (s fullStore) List(ctx context.Context, prefix string) ([]dynamolease.Record, error) {
	return s.t.mem.List(ctx, prefix)
}

func (s fullStore) ListPage(ctx context.Context, prefix, after string, limit int) ([]dynamolease.Record, string, error) {
	return s.t.mem.ListPage(ctx, prefix, after, limit)
}

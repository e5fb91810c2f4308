// Package leasetest holds the lease tables tests of dynamolease's users put
// under them, in the manner of net/http/httptest: dynamolease's in-memory
// table seen through hooks that stand for a lease store's timing (a slow
// release, stalled renewals, a throttled partition) or watch its writes.
// A test of the proxy names these, not dynamolease's records, so the
// lease protocol's types stay in the packages that own the leased write.
package leasetest

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
)

// The operations a Call names.
const (
	OpCreate       = "create"
	OpReplace      = "replace"
	OpGet          = "get"
	OpCreateBatch  = "create_batch"
	OpReplaceBatch = "replace_batch"
	OpTakeVouched  = "create_or_take_vouched"
)

// Call is one call a Table's store received, as its hooks see it.
type Call struct {
	Op string
	// Path and ETag name the row (a batch's first row).
	Path, ETag string
	// Released: the call writes the row released (a lease's release).
	Released bool
	// Rows is a batch's length, 1 otherwise.
	Rows int
}

// Hooks stand for a lease store's behaviour around the in-memory table's.
type Hooks struct {
	// Before, if set, runs before a call reaches the table (a store's round
	// trip, a stall); an error is the call's answer.
	Before func(ctx context.Context, c Call) error
	// After, if set, runs once a call that reached the table returned.
	After func(c Call, err error)
	// MaxBatch, if set, is the most rows a batch call takes; a longer batch
	// fails as DynamoDB's TransactWriteItems refuses one over 100 items.
	MaxBatch int
}

// Table is a lease table for a test: what the committer under test is
// given (Store), and the rows the test reads (Row).
type Table struct {
	mem   *dynamolease.MemTable
	hooks Hooks
	plain bool
}

// New is a table with every capability of the in-memory table (batches,
// vouched takes, lists), as the embedded, DynamoDB and etcd stores have.
func New(h Hooks) *Table { return &Table{mem: dynamolease.NewMemTable(), hooks: h} }

// NewPlain is a table offering only the three calls every store has
// (Create, Replace, Get): a store without batches, whose leases are taken
// one row at a time.
func NewPlain(h Hooks) *Table { return &Table{mem: dynamolease.NewMemTable(), hooks: h, plain: true} }

// Store is the table as a committer sees it, hooks included.
func (t *Table) Store() dynamolease.Table {
	if t.plain {
		return plainStore{t}
	}
	return fullStore{plainStore{t}}
}

// Timing tunes a test's committer; zero fields take the proxy tests' usual
// values (a 5 s lease polled every 20 ms, 3 s of waiting).
type Timing struct {
	Timeout, PollInterval, WaitBudget time.Duration
}

// Committer is a committer named owner on the table, timed by tm.
func (t *Table) Committer(owner string, tm Timing) *dynamolease.Committer {
	opts := dynamolease.Options{Timeout: 5 * time.Second, MaxClockSkewRate: 2, PollInterval: 20 * time.Millisecond,
		TTL: time.Hour, WaitBudget: 3 * time.Second, Owner: owner}
	if tm.Timeout != 0 {
		opts.Timeout = tm.Timeout
	}
	if tm.PollInterval != 0 {
		opts.PollInterval = tm.PollInterval
	}
	if tm.WaitBudget != 0 {
		opts.WaitBudget = tm.WaitBudget
	}
	return dynamolease.NewCommitter(t.Store(), opts, zerolog.Nop())
}

// Row reads the row (path, etag) as it stands, past the hooks: nil when
// there is none.
func (t *Table) Row(tb testing.TB, path, etag string) *dynamolease.Record {
	tb.Helper()
	row, err := t.mem.Get(context.Background(), path, etag)
	if err != nil {
		tb.Fatalf("read lease row (%s, %s): %v", path, etag, err)
	}
	return row
}

// ForceRelease releases the row (path, etag) at generation as an operator's
// s3cond leases release --force does, through the hooks.
func (t *Table) ForceRelease(ctx context.Context, path, etag string, generation uint64) error {
	_, err := dynamolease.ReleaseRow(ctx, t.Store(), path, etag, generation)
	return err
}

// call runs do between the hooks.
func (t *Table) call(ctx context.Context, c Call, do func() error) error {
	if t.hooks.Before != nil {
		if err := t.hooks.Before(ctx, c); err != nil {
			return err
		}
	}
	err := do()
	if t.hooks.After != nil {
		t.hooks.After(c, err)
	}
	return err
}

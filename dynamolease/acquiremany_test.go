package dynamolease_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
)

// loggingBatchTable stands for a lease store with batches of maxBatch
// rows; it logs each batch create as the paths it carried.
type loggingBatchTable struct {
	*dynamolease.MemTable
	maxBatch int
	mu       sync.Mutex
	log      []string
}

func (l *loggingBatchTable) MaxBatch() int { return l.maxBatch }

func (l *loggingBatchTable) add(entry string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.log = append(l.log, entry)
}

func (l *loggingBatchTable) CreateInOrder(ctx context.Context, rs []dynamolease.Record) (int, *dynamolease.Record, error) {
	paths := make([]string, len(rs))
	for i, r := range rs {
		paths[i] = r.Path
	}
	l.add("batch " + strings.Join(paths, ","))
	return l.MemTable.CreateInOrder(ctx, rs)
}

func requests(paths ...string) []dynamolease.LeaseRequest {
	reqs := make([]dynamolease.LeaseRequest, len(paths))
	for i, p := range paths {
		reqs[i] = dynamolease.LeaseRequest{Path: p, ETag: "*", ReadAt: time.Now()}
	}
	return reqs
}

// TestAcquireManyKeepsKeyOrder: the free rows are created in batches of at
// most MaxBatch; a row that exists (c, held by another process) and one a
// goroutine of this process holds (e) are each taken by the single-key
// path before any later row is created.
func TestAcquireManyKeepsKeyOrder(t *testing.T) {
	table := &loggingBatchTable{MemTable: dynamolease.NewMemTable(), maxBatch: 2}
	other := dynamolease.NewCommitter(table.MemTable, fastOptions(), zerolog.Nop())
	if _, err := other.Acquire(context.Background(), "c", "*", nil); err != nil {
		t.Fatal(err)
	}
	c := dynamolease.NewCommitter(table, fastOptions(), zerolog.Nop())
	local, err := c.Acquire(context.Background(), "e", "*", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = local.Release(context.Background()) }()
	reqs := requests("a", "b", "c", "d", "e", "f", "g", "h")
	one := func(_ context.Context, i int) (*dynamolease.Lease, error) {
		table.add("one " + reqs[i].Path)
		return nil, fmt.Errorf("%s: %w", reqs[i].Path, dynamolease.ErrWaitBudgetExceeded)
	}
	leases, errs := c.AcquireMany(context.Background(), reqs, one)
	want := "batch a,b | batch c,d | one c | batch d | one e | batch f,g | batch h"
	if got := strings.Join(table.log, " | "); got != want {
		t.Errorf("calls:\n got %s\nwant %s", got, want)
	}
	for i, r := range reqs {
		contended := r.Path == "c" || r.Path == "e"
		if contended != (errs[i] != nil) || contended == (leases[i] != nil) {
			t.Errorf("%s: lease %v, error %v", r.Path, leases[i], errs[i])
		}
	}
	var held []*dynamolease.Lease
	for _, l := range leases {
		if l != nil {
			held = append(held, l)
		}
	}
	for i, err := range c.ReleaseAll(context.Background(), held) {
		if err != nil {
			t.Errorf("release %s: %v", held[i].Path(), err)
		}
	}
	for _, p := range []string{"a", "b", "d", "f", "g", "h"} {
		if row, _ := table.Get(context.Background(), p, "*"); row == nil || !row.Released {
			t.Errorf("row %s after ReleaseAll: %+v, want released", p, row)
		}
	}
}

// TestAcquireManyRechecksWhereAcquireWould: a created row skips the
// re-check when its batch came within one lease timeout of the state
// read, as Acquire does; with no usable read it re-checks, and a failed
// re-check releases the lease and reports the check's error.
func TestAcquireManyRechecksWhereAcquireWould(t *testing.T) {
	table := &loggingBatchTable{MemTable: dynamolease.NewMemTable(), maxBatch: 10}
	c := dynamolease.NewCommitter(table, fastOptions(), zerolog.Nop())
	errMoved := errors.New("precondition failed on the re-check")
	var checked []string
	check := func(path string, err error) func(context.Context) error {
		return func(context.Context) error {
			checked = append(checked, path)
			return err
		}
	}
	reqs := []dynamolease.LeaseRequest{
		{Path: "fresh", ETag: "*", ReadAt: time.Now(), Check: check("fresh", errMoved)},
		{Path: "unread", ETag: "*", Check: check("unread", nil)},
		{Path: "unread-failing", ETag: "*", Check: check("unread-failing", errMoved)},
	}
	leases, errs := c.AcquireMany(context.Background(), reqs, nil)
	if got := strings.Join(checked, ","); got != "unread,unread-failing" {
		t.Errorf("re-checked %q, want the two rows without a state read", got)
	}
	if leases[0] == nil || leases[1] == nil || errs[0] != nil || errs[1] != nil {
		t.Errorf("leases %v, errors %v: want fresh and unread held", leases[:2], errs[:2])
	}
	if leases[2] != nil || !errors.Is(errs[2], errMoved) {
		t.Errorf("unread-failing: lease %v, error %v; want the check's error", leases[2], errs[2])
	}
	if row, _ := table.Get(context.Background(), "unread-failing", "*"); row == nil || !row.Released {
		t.Errorf("row of the failed re-check: %+v, want released", row)
	}
}

// TestAcquireManyWithoutBatchesGoesKeyByKey: a table without batches has
// every lease taken by the single-key path, in order.
func TestAcquireManyWithoutBatchesGoesKeyByKey(t *testing.T) {
	c := dynamolease.NewCommitter(&countingTable{Table: dynamolease.NewMemTable()}, fastOptions(), zerolog.Nop())
	reqs := requests("a", "b", "c")
	var order []string
	one := func(ctx context.Context, i int) (*dynamolease.Lease, error) {
		order = append(order, reqs[i].Path)
		return c.Acquire(ctx, reqs[i].Path, reqs[i].ETag, nil)
	}
	leases, errs := c.AcquireMany(context.Background(), reqs, one)
	if got := strings.Join(order, ","); got != "a,b,c" {
		t.Errorf("single-key calls %q, want a,b,c", got)
	}
	for i := range reqs {
		if leases[i] == nil || errs[i] != nil {
			t.Errorf("%s: %v, %v", reqs[i].Path, leases[i], errs[i])
		}
	}
}

// TestAcquireManyRowsCarryTheLeaseTimeout: a batch-created row carries
// Options.Timeout as its lease length (a DeleteObjects entry's lease is
// not sized), so another process waits it out rather than taking the row
// over at once as it would a row of length zero.
func TestAcquireManyRowsCarryTheLeaseTimeout(t *testing.T) {
	table := &loggingBatchTable{MemTable: dynamolease.NewMemTable(), maxBatch: 10}
	opts := fastOptions()
	c := dynamolease.NewCommitter(table, opts, zerolog.Nop())
	leases, errs := c.AcquireMany(context.Background(), requests("a", "b"), nil)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("lease %d: %v", i, err)
		}
	}
	defer c.ReleaseAll(context.Background(), leases)
	for _, l := range leases {
		if l.Timeout() != opts.Timeout {
			t.Errorf("lease %s: timeout %s, want %s", l.Path(), l.Timeout(), opts.Timeout)
		}
		row, err := table.Get(context.Background(), l.Path(), "*")
		if err != nil || row == nil || row.Timeout != opts.Timeout {
			t.Errorf("row %s: %+v, %v; want timeout %s", l.Path(), row, err, opts.Timeout)
		}
	}
	otherOpts := opts
	otherOpts.WaitBudget = opts.Timeout / 2 // ends before the row could go stale
	other := dynamolease.NewCommitter(table.MemTable, otherOpts, zerolog.Nop())
	if l, err := other.Acquire(context.Background(), "a", "*", nil); !errors.Is(err, dynamolease.ErrWaitBudgetExceeded) {
		if l != nil {
			_ = l.Release(context.Background())
		}
		t.Fatalf("another process's Acquire of a held batch row = %v, want ErrWaitBudgetExceeded", err)
	}
}

// TestAcquireManyRenewsTakenLeasesWhileOneWaits: while one() waits for a
// row another process holds, the rows the batch took before it are renewed,
// so another process waiting for one of them longer than timeout × skew
// does not take it over.
func TestAcquireManyRenewsTakenLeasesWhileOneWaits(t *testing.T) {
	table := &loggingBatchTable{MemTable: dynamolease.NewMemTable(), maxBatch: 10}
	opts := fastOptions()
	other := dynamolease.NewCommitter(table.MemTable, opts, zerolog.Nop())
	holder, err := other.Acquire(context.Background(), "b", "*", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Release(context.Background()) }()
	c := dynamolease.NewCommitter(table, opts, zerolog.Nop())
	waiterOpts := opts
	waiterOpts.WaitBudget = 3 * opts.Timeout * time.Duration(opts.MaxClockSkewRate) // long enough to take a stale row over
	waiter := dynamolease.NewCommitter(table.MemTable, waiterOpts, zerolog.Nop())
	var waited error
	paths := []string{"a", "b"}
	one := func(ctx context.Context, i int) (*dynamolease.Lease, error) {
		// While "b" is held, another process waits for "a" past the time
		// an unrenewed row of it would be taken over.
		l, err := waiter.Acquire(ctx, "a", "*", nil)
		if l != nil {
			_ = l.Release(context.Background())
		}
		waited = err
		return nil, fmt.Errorf("%s: %w", paths[i], dynamolease.ErrWaitBudgetExceeded)
	}
	leases, _ := c.AcquireMany(context.Background(), requests(paths...), one)
	if !errors.Is(waited, dynamolease.ErrWaitBudgetExceeded) {
		t.Fatalf("another process waiting for a row the batch took while one() waited: %v, want ErrWaitBudgetExceeded", waited)
	}
	if leases[0] == nil {
		t.Fatal("no lease of a")
	}
	if err := leases[0].Release(context.Background()); err != nil {
		t.Fatalf("release a after the wait: %v, want the lease still held", err)
	}
}

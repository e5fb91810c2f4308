package dynamolease_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
)

// fastOptions are lease timings scaled down so the protocol's waits take
// milliseconds.
func fastOptions() dynamolease.Options {
	return dynamolease.Options{
		Timeout:          200 * time.Millisecond,
		MaxClockSkewRate: 2,
		PollInterval:     20 * time.Millisecond,
		TTL:              time.Hour,
		WaitBudget:       5 * time.Second,
	}
}

// countingTable stands for a DynamoDB table whose requests we count and can
// make fail, as an unreachable or throttling DynamoDB would.
type countingTable struct {
	dynamolease.Table
	creates, replaces, gets atomic.Int64
	fail                    atomic.Bool
	// failFromGet sets fail at the next Get: a table that goes down while
	// a waiter polls a held row.
	failFromGet atomic.Bool
}

var errUnreachable = errors.New("dial tcp 127.0.0.1:1: connection refused")

func (c *countingTable) Create(ctx context.Context, r dynamolease.Record) (*dynamolease.Record, error) {
	c.creates.Add(1)
	if c.fail.Load() {
		return nil, errUnreachable
	}
	return c.Table.Create(ctx, r)
}

func (c *countingTable) Replace(ctx context.Context, r dynamolease.Record, seen uint64) (*dynamolease.Record, error) {
	c.replaces.Add(1)
	if c.fail.Load() {
		return nil, errUnreachable
	}
	return c.Table.Replace(ctx, r, seen)
}

func (c *countingTable) Get(ctx context.Context, path, etag string) (*dynamolease.Record, error) {
	c.gets.Add(1)
	if c.failFromGet.Load() {
		c.fail.Store(true)
	}
	if c.fail.Load() {
		return nil, errUnreachable
	}
	return c.Table.Get(ctx, path, etag)
}

// Two Committers on one table behave like two processes.
func twoProcesses(opts dynamolease.Options) (dynamolease.Table, *dynamolease.Committer, *dynamolease.Committer) {
	tbl := dynamolease.NewMemTable()
	return tbl, dynamolease.NewCommitter(tbl, opts, zerolog.Nop()), dynamolease.NewCommitter(tbl, opts, zerolog.Nop())
}

func mustAcquire(t *testing.T, c *dynamolease.Committer, path, etag string) *dynamolease.Lease {
	t.Helper()
	l, err := c.Acquire(testContext(t, 10*time.Second), path, etag, nil)
	if err != nil {
		t.Fatalf("Acquire(%q, %q): %v", path, etag, err)
	}
	return l
}

func TestReleasedLeaseIsTakenOverAtOnce(t *testing.T) {
	opts := fastOptions()
	opts.Timeout, opts.PollInterval = 10*time.Second, 2*time.Second
	tbl, p1, p2 := twoProcesses(opts)
	first := mustAcquire(t, p1, "b/k", `"e1"`)
	if err := first.Release(testContext(t, time.Second)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	second := mustAcquire(t, p2, "b/k", `"e1"`)
	if took := time.Since(start); took > opts.PollInterval/10 {
		t.Fatalf("taking over a released lease took %s", took)
	}
	if second.Generation() != first.Generation()+1 {
		t.Fatalf("generation = %d, want %d", second.Generation(), first.Generation()+1)
	}
	row, _ := tbl.Get(testContext(t, time.Second), "b/k", `"e1"`)
	if row == nil || row.Generation != first.Generation()+1 || row.Released {
		t.Fatalf("row = %+v, want generation %d held", row, first.Generation()+1)
	}
}

func TestStaleLeaseIsTakenOverOnlyAfterTimeoutTimesSkew(t *testing.T) {
	opts := fastOptions()
	tbl, p1, p2 := twoProcesses(opts)
	stale := mustAcquire(t, p1, "b/k", "*") // its holder never releases or renews
	start := time.Now()
	var checks atomic.Int32
	taker, err := p2.Acquire(testContext(t, 5*time.Second), "b/k", "*", func(context.Context) error {
		checks.Add(1)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	waited := time.Since(start)
	wantWait := time.Duration(float64(opts.Timeout) * opts.MaxClockSkewRate)
	if waited < wantWait {
		t.Fatalf("took over after %s, before timeout × skew = %s", waited, wantWait)
	}
	if waited > wantWait+300*time.Millisecond {
		t.Fatalf("took over after %s, long after timeout × skew = %s", waited, wantWait)
	}
	if taker.Generation() != stale.Generation()+1 {
		t.Fatalf("generation = %d, want %d", taker.Generation(), stale.Generation()+1)
	}
	// Re-checked every poll while waiting, and once more holding the lease.
	if n := checks.Load(); n < 2 {
		t.Fatalf("precondition checked %d times in %s of waiting", n, waited)
	}

	// The old holder finds out.
	err = stale.Renew(testContext(t, time.Second))
	if !errors.Is(err, dynamolease.ErrLeaseLost) {
		t.Fatalf("Renew of a taken-over lease = %v, want ErrLeaseLost", err)
	}
	select {
	case <-stale.Lost():
	default:
		t.Fatal("Lost() not closed after a failed renewal")
	}
	if err := stale.Release(testContext(t, time.Second)); !errors.Is(err, dynamolease.ErrLeaseLost) {
		t.Fatalf("Release of a lost lease = %v, want ErrLeaseLost", err)
	}
	if row, _ := tbl.Get(testContext(t, time.Second), "b/k", "*"); row == nil || row.Generation != taker.Generation() || row.Released {
		t.Fatalf("row %+v: the stale holder's release touched the new holder's row", row)
	}
}

func TestCheckRunsOnceHoldingAndItsFailureReleases(t *testing.T) {
	tbl, p1, p2 := twoProcesses(fastOptions())
	var calls int
	lease, err := p1.Acquire(testContext(t, time.Second), "b/k", "*", func(context.Context) error { calls++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Fatalf("uncontended Acquire checked %d times, want exactly once after holding the lease", calls)
	}
	if err := lease.Release(testContext(t, time.Second)); err != nil {
		t.Fatal(err)
	}

	// The row is released: the check runs before the takeover, and once
	// more holding the lease. Here it passes first and fails holding.
	precondition := errors.New("object exists now")
	calls = 0
	_, err = p1.Acquire(testContext(t, time.Second), "b/k", "*", func(context.Context) error {
		calls++
		if calls == 1 {
			return nil
		}
		return precondition
	})
	if err != precondition || calls != 2 {
		t.Fatalf("Acquire with a failing re-check = %v after %d checks, want the check's own error after 2", err, calls)
	}
	row, _ := tbl.Get(testContext(t, time.Second), "b/k", "*")
	if row == nil || !row.Released || row.Generation != lease.Generation()+1 {
		t.Fatalf("row after a failed re-check = %+v, want generation %d released", row, lease.Generation()+1)
	}
	start := time.Now()
	mustAcquire(t, p2, "b/k", "*")
	if took := time.Since(start); took > 200*time.Millisecond {
		t.Fatalf("next writer waited %s for a lease released after a failed check", took)
	}
}

func TestCheckFailingWhileWaitingReturnsAtOnce(t *testing.T) {
	opts := fastOptions()
	opts.Timeout = 10 * time.Second
	_, p1, p2 := twoProcesses(opts)
	mustAcquire(t, p1, "b/k", "*")
	precondition := errors.New("412")
	var calls atomic.Int32
	start := time.Now()
	_, err := p2.Acquire(testContext(t, 5*time.Second), "b/k", "*", func(context.Context) error {
		if calls.Add(1) == 3 {
			return precondition
		}
		return nil
	})
	if err != precondition {
		t.Fatalf("Acquire = %v, want the check's error", err)
	}
	if took := time.Since(start); took < 3*opts.PollInterval || took > 3*opts.PollInterval+300*time.Millisecond {
		t.Fatalf("failed after %s, want about 3 poll intervals (%s)", took, 3*opts.PollInterval)
	}
}

func TestWaitBudgetExceeded(t *testing.T) {
	opts := fastOptions()
	opts.Timeout, opts.WaitBudget = 10*time.Second, 150*time.Millisecond
	_, p1, p2 := twoProcesses(opts)
	mustAcquire(t, p1, "b/k", "*")
	start := time.Now()
	_, err := p2.Acquire(testContext(t, 5*time.Second), "b/k", "*", nil)
	if !errors.Is(err, dynamolease.ErrWaitBudgetExceeded) {
		t.Fatalf("Acquire = %v, want ErrWaitBudgetExceeded", err)
	}
	if took := time.Since(start); took < opts.WaitBudget || took > opts.WaitBudget+300*time.Millisecond {
		t.Fatalf("gave up after %s, want about %s", took, opts.WaitBudget)
	}
	// The same within one process, where the waiter queues locally.
	start = time.Now()
	_, err = p1.Acquire(testContext(t, 5*time.Second), "b/k", "*", nil)
	if !errors.Is(err, dynamolease.ErrWaitBudgetExceeded) {
		t.Fatalf("local Acquire = %v, want ErrWaitBudgetExceeded", err)
	}
	if took := time.Since(start); took > opts.WaitBudget+300*time.Millisecond {
		t.Fatalf("local waiter gave up after %s", took)
	}
}

func TestContextCancelEndsTheWait(t *testing.T) {
	opts := fastOptions()
	opts.Timeout = 10 * time.Second
	_, p1, p2 := twoProcesses(opts)
	mustAcquire(t, p1, "b/k", "*")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Millisecond)
	defer cancel()
	_, err := p2.Acquire(ctx, "b/k", "*", nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire = %v, want context.DeadlineExceeded", err)
	}
}

func TestRenewMovesGenerationAndDeadline(t *testing.T) {
	tbl, p1, _ := twoProcesses(fastOptions())
	lease := mustAcquire(t, p1, "b/k", `"e"`)
	before, born := lease.Deadline(), lease.Generation()
	if rem := lease.Remaining(); rem <= 0 || rem > fastOptions().Timeout {
		t.Fatalf("Remaining() = %s right after acquiring a %s lease", rem, fastOptions().Timeout)
	}
	if err := lease.Renew(testContext(t, time.Second)); err != nil {
		t.Fatal(err)
	}
	if lease.Generation() != born+1 || !lease.Deadline().After(before) {
		t.Fatalf("after Renew: generation %d, deadline moved %s; want %d and later", lease.Generation(), lease.Deadline().Sub(before), born+1)
	}
	row, _ := tbl.Get(testContext(t, time.Second), "b/k", `"e"`)
	if row == nil || row.Generation != born+1 || row.Released {
		t.Fatalf("row = %+v", row)
	}
}

func TestKeepAliveHoldsOffTakeover(t *testing.T) {
	opts := fastOptions()
	opts.Timeout = 300 * time.Millisecond
	tbl := dynamolease.NewMemTable()
	lease := mustAcquire(t, dynamolease.NewCommitter(tbl, opts, zerolog.Nop()), "b/k", "*")
	stop := lease.KeepAlive(context.Background())
	waiter := opts
	waiter.WaitBudget = 1500 * time.Millisecond
	other := dynamolease.NewCommitter(tbl, waiter, zerolog.Nop())
	_, err := other.Acquire(testContext(t, 5*time.Second), "b/k", "*", nil)
	if !errors.Is(err, dynamolease.ErrWaitBudgetExceeded) {
		t.Fatalf("Acquire against a kept-alive lease = %v, want ErrWaitBudgetExceeded", err)
	}
	stop()
	if g := lease.Generation(); g < 4 {
		t.Fatalf("KeepAlive renewed %d times in 1.5 s of a 300 ms lease, want about 10", g)
	}
	select {
	case <-lease.Lost():
		t.Fatal("kept-alive lease reported lost")
	default:
	}
	if err := lease.Release(testContext(t, time.Second)); err != nil {
		t.Fatal(err)
	}
}

func TestKeepAliveDetectsLostLease(t *testing.T) {
	opts := fastOptions()
	opts.Timeout = 100 * time.Millisecond
	tbl := dynamolease.NewMemTable()
	lease := mustAcquire(t, dynamolease.NewCommitter(tbl, opts, zerolog.Nop()), "b/k", "*")
	stop := lease.KeepAlive(context.Background())
	defer stop()
	// Another process takes the row over (as one whose clock ran fast would).
	if _, err := tbl.Replace(testContext(t, time.Second), dynamolease.Record{
		Path: "b/k", ETag: "*", Generation: lease.Generation() + 1, Timeout: time.Second, Owner: "intruder",
	}, lease.Generation()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lease.Lost():
	case <-time.After(2 * time.Second):
		t.Fatal("KeepAlive did not report the lease lost")
	}
	row, _ := tbl.Get(testContext(t, time.Second), "b/k", "*")
	if row.Owner != "intruder" {
		t.Fatalf("row owner = %q: the lost holder overwrote the new one", row.Owner)
	}
}

func TestKeepAliveGivesUpAtDeadlineWhenTableFails(t *testing.T) {
	opts := fastOptions()
	opts.Timeout, opts.PollInterval = 500*time.Millisecond, 20*time.Millisecond
	tbl := &countingTable{Table: dynamolease.NewMemTable()}
	lease := mustAcquire(t, dynamolease.NewCommitter(tbl, opts, zerolog.Nop()), "b/k", "*")
	stop := lease.KeepAlive(context.Background())
	defer stop()
	tbl.fail.Store(true)
	select {
	case <-lease.Lost():
		if lease.Remaining() > 0 {
			t.Fatalf("reported lost with %s of the lease left", lease.Remaining())
		}
	case <-time.After(3 * time.Second):
		t.Fatal("lease never reported lost while every renewal failed")
	}
	if n := tbl.replaces.Load(); n < 2 {
		t.Fatalf("renewal tried %d times before giving up, want retries every poll", n)
	}
}

func TestInProcessWakeUp(t *testing.T) {
	// In a bubble: the test knows when the waiter has queued, and time moves only on polls.
	synctest.Test(t, func(t *testing.T) {
		opts := fastOptions()
		opts.Timeout, opts.PollInterval = 10*time.Second, 2*time.Second
		c := dynamolease.NewCommitter(dynamolease.NewMemTable(), opts, zerolog.Nop())
		holder := mustAcquire(t, c, "b/k", `"e"`)
		got := make(chan time.Time, 1)
		go func() {
			l, err := c.Acquire(testContext(t, 10*time.Second), "b/k", `"e"`, nil)
			if err != nil {
				t.Error(err)
				close(got)
				return
			}
			got <- time.Now()
			_ = l.Release(context.Background())
		}()
		synctest.Wait()
		if n := c.LocalContenders("b/k", `"e"`); n != 2 {
			t.Fatalf("%d local contenders once the waiter blocked, want the holder and the waiter", n)
		}
		if err := holder.Release(testContext(t, time.Second)); err != nil {
			t.Fatal(err)
		}
		released := time.Now()
		at, ok := <-got
		if !ok {
			t.FailNow()
		}
		// The bubble's clock moves only when every goroutine waits on it: a
		// waiter woken by the release, not by its next poll, gets the lease
		// at the very instant of the release.
		if latency := at.Sub(released); latency != 0 {
			t.Fatalf("waiter got the lease %s after Release (poll interval %s): it was not woken by the release", latency, opts.PollInterval)
		}
	})
}

// A lease leaked by a goroutine of this process must not block the
// process's other waiters for longer than it would block another process.
func TestLeakedLocalLeaseIsTakenOverAfterTimeoutTimesSkew(t *testing.T) {
	opts := fastOptions()
	opts.Timeout = 400 * time.Millisecond
	c := dynamolease.NewCommitter(dynamolease.NewMemTable(), opts, zerolog.Nop())
	leaked := mustAcquire(t, c, "b/k", "*") // never released
	start := time.Now()
	l := mustAcquire(t, c, "b/k", "*")
	waited := time.Since(start)
	if min := time.Duration(float64(opts.Timeout) * opts.MaxClockSkewRate); waited < min || waited > min+min/2 {
		t.Fatalf("took a leaked local lease over after %s; timeout × skew = %s", waited, min)
	}
	if l.Generation() != leaked.Generation()+1 {
		t.Fatalf("generation = %d, want %d", l.Generation(), leaked.Generation()+1)
	}
}

func TestLocalContendersQueueWithoutPollingTheTable(t *testing.T) {
	opts := fastOptions()
	opts.PollInterval = 5 * time.Millisecond
	// Long enough that no holder's lease can expire, even on a loaded
	// machine: a takeover after timeout × skew would be correct behaviour,
	// but would break the one-holder-at-a-time count this test makes.
	opts.Timeout = 10 * time.Second
	tbl := &countingTable{Table: dynamolease.NewMemTable()}
	c := dynamolease.NewCommitter(tbl, opts, zerolog.Nop())
	const workers, rounds = 8, 20
	var inside, maxInside atomic.Int32
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				lease, err := c.Acquire(testContext(t, 10*time.Second), "b/hot", "*", nil)
				if err != nil {
					t.Error(err)
					return
				}
				n := inside.Add(1)
				if n > maxInside.Load() {
					maxInside.Store(n)
				}
				time.Sleep(time.Millisecond) // hold the lease a while, so others contend for it
				inside.Add(-1)
				if err := lease.Release(testContext(t, time.Second)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if maxInside.Load() != 1 {
		t.Fatalf("%d holders at once", maxInside.Load())
	}
	// Each turn costs one Create (answered with the released row) and one
	// Replace to take it, plus one to release; nobody polls.
	if gets := tbl.gets.Load(); gets != 0 {
		t.Fatalf("local waiters read the table %d times", gets)
	}
	if writes := tbl.creates.Load() + tbl.replaces.Load(); writes > 3*workers*rounds {
		t.Fatalf("%d table writes for %d leases", writes, workers*rounds)
	}
}

func TestStoreFailureIsStoreError(t *testing.T) {
	opts := fastOptions()
	opts.Timeout = 10 * time.Second
	tbl := &countingTable{Table: dynamolease.NewMemTable()}
	c := dynamolease.NewCommitter(tbl, opts, zerolog.Nop())
	tbl.fail.Store(true)
	start := time.Now()
	_, err := c.Acquire(testContext(t, time.Second), "b/k", "*", nil)
	var storeErr *dynamolease.StoreError
	if !errors.As(err, &storeErr) || storeErr.Op != "create" || !errors.Is(err, errUnreachable) {
		t.Fatalf("Acquire on a failing table = %v, want *StoreError{create} wrapping the cause", err)
	}
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Fatalf("failing took %s", took)
	}

	// Failing while waiting on another holder.
	tbl.fail.Store(false)
	mustAcquire(t, dynamolease.NewCommitter(tbl, opts, zerolog.Nop()), "b/k", "*")
	// The table fails once the waiter has found the row held (its Create
	// answered) and is polling it: from its first Get on.
	tbl.failFromGet.Store(true)
	_, err = c.Acquire(testContext(t, 5*time.Second), "b/k", "*", nil)
	if !errors.As(err, &storeErr) || storeErr.Op != "get" {
		t.Fatalf("Acquire when the table fails mid-wait = %v, want *StoreError{get}", err)
	}
}

// A waiter that finds the row released checks its precondition before it
// takes the lease over: if the object moved, it answers without writing.
func TestCheckBeforeTakingOverAReleasedRow(t *testing.T) {
	tbl, p1, _ := twoProcesses(fastOptions())
	lease := mustAcquire(t, p1, "b/k", `"v1"`)
	if err := lease.Release(testContext(t, time.Second)); err != nil {
		t.Fatal(err)
	}
	moved := errors.New("ETag moved")
	calls := 0
	_, err := p1.Acquire(testContext(t, time.Second), "b/k", `"v1"`, func(context.Context) error { calls++; return moved })
	if err != moved || calls != 1 {
		t.Fatalf("Acquire = %v after %d checks, want the check's error after 1", err, calls)
	}
	row, _ := tbl.Get(testContext(t, time.Second), "b/k", `"v1"`)
	if row == nil || !row.Released || row.Generation != lease.Generation() {
		t.Fatalf("row = %+v, want generation %d released: a failed check before the takeover writes nothing", row, lease.Generation())
	}
}

// Local waiters whose ETag moved while they queued answer with the check's
// error once the holder lets go, and none of them writes to the table.
func TestLocalWaitersWhoseETagMovedWriteNothing(t *testing.T) {
	// In a bubble: the test knows when the waiters have queued.
	synctest.Test(t, func(t *testing.T) {
		opts := fastOptions()
		opts.PollInterval = time.Hour // only the release may wake them
		tbl, p1, _ := twoProcesses(opts)
		holder := mustAcquire(t, p1, "b/k", `"v1"`)
		moved := errors.New("ETag moved")
		var released atomic.Bool
		const waiters = 4
		errs := make(chan error, waiters)
		for range waiters {
			go func() {
				_, err := p1.Acquire(testContext(t, 5*time.Second), "b/k", `"v1"`, func(context.Context) error {
					if released.Load() {
						return moved
					}
					return nil
				})
				errs <- err
			}()
		}
		synctest.Wait()
		if n := p1.LocalContenders("b/k", `"v1"`); n != 1+waiters {
			t.Fatalf("%d local contenders once the waiters blocked, want the holder and %d waiters", n, waiters)
		}
		released.Store(true)
		start := time.Now()
		if err := holder.Release(testContext(t, time.Second)); err != nil {
			t.Fatal(err)
		}
		for range waiters {
			select {
			case err := <-errs:
				if err != moved {
					t.Fatalf("waiter got %v, want the check's error", err)
				}
			case <-time.After(2 * time.Second):
				t.Fatal("a waiter did not check its precondition when the holder let go")
			}
		}
		if took := time.Since(start); took != 0 {
			t.Fatalf("waiters took %s to answer: they waited for a poll, not for the release", took)
		}
		// None of them took the lease to find out.
		row, _ := tbl.Get(testContext(t, time.Second), "b/k", `"v1"`)
		if row == nil || !row.Released || row.Generation != holder.Generation() {
			t.Fatalf("row = %+v, want the holder's generation %d, released", row, holder.Generation())
		}
	})
}

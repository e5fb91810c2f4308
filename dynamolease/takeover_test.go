package dynamolease_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
)

// These tests run in a synctest bubble: its clock is fake and jumps ahead
// whenever every goroutine of the bubble waits, so the default lease
// settings (20 s × 3 before a takeover, a 10 s wait budget) take no real time.

// defaultTakeover is timeout × max_clock_skew_rate with the default options.
const defaultTakeover = 20 * time.Second * 3

// retryUntilLease calls Acquire on c every pause (after each 409), as a
// client retrying on ConditionalRequestConflict does, until it holds the
// lease; it returns the lease and how many calls ran out of their budget.
func retryUntilLease(t *testing.T, c *dynamolease.Committer, key string, pause time.Duration, maxCalls int) (*dynamolease.Lease, int) {
	t.Helper()
	for budgetsSpent := 0; budgetsSpent < maxCalls; budgetsSpent++ {
		l, err := c.Acquire(context.Background(), key, "*", nil)
		if err == nil {
			return l, budgetsSpent
		}
		if !errors.Is(err, dynamolease.ErrWaitBudgetExceeded) {
			t.Fatalf("Acquire: %v; want the lease or ErrWaitBudgetExceeded", err)
		}
		time.Sleep(pause)
	}
	t.Fatalf("no lease after %d calls (%s of retrying)", maxCalls, time.Duration(maxCalls)*(c.Options().WaitBudget+pause))
	return nil, 0
}

// A holder that crashed (never renews nor releases) is taken over timeout ×
// skew after this process first saw its row, though each Acquire gives up
// after the 10 s wait budget: the wait counts across calls.
func TestCrashedHolderTakenOverAcrossShortWaitBudgets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, crashed, waiter := twoProcesses(dynamolease.Options{})
		crashedLease, err := crashed.Acquire(context.Background(), "b/k", "*", nil)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		lease, budgetsSpent := retryUntilLease(t, waiter, "b/k", 0, 20)
		took := time.Since(start)
		if took < defaultTakeover || took > defaultTakeover+waiter.Options().PollInterval {
			t.Fatalf("taken over after %s; want timeout × skew = %s after the row was first seen", took, defaultTakeover)
		}
		// Calls started at 0, 10, … 40 s ran out of budget; the one started
		// at 50 s took over at 60 s.
		if budgetsSpent != 5 {
			t.Fatalf("%d calls answered 409 before the takeover; want 5", budgetsSpent)
		}
		if lease.Generation() != crashedLease.Generation()+1 {
			t.Fatalf("generation %d, want %d", lease.Generation(), crashedLease.Generation()+1)
		}
	})
}

// Nobody needs to wait all the time: a call that comes after timeout × skew
// since the row was first seen takes it over at once.
func TestCrashedHolderTakenOverByALateCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, crashed, waiter := twoProcesses(dynamolease.Options{})
		crashedLease, err := crashed.Acquire(context.Background(), "b/k", "*", nil)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := waiter.Acquire(context.Background(), "b/k", "*", nil); !errors.Is(err, dynamolease.ErrWaitBudgetExceeded) {
			t.Fatalf("first Acquire: %v, want ErrWaitBudgetExceeded", err)
		}
		time.Sleep(defaultTakeover - time.Since(start))
		callStart := time.Now()
		lease, err := waiter.Acquire(context.Background(), "b/k", "*", nil)
		if err != nil {
			t.Fatalf("Acquire %s after the row was first seen: %v", time.Since(start), err)
		}
		if waited := time.Since(callStart); waited > 0 {
			t.Fatalf("the late call waited %s; want the takeover at once", waited)
		}
		if lease.Generation() != crashedLease.Generation()+1 {
			t.Fatalf("generation %d, want %d", lease.Generation(), crashedLease.Generation()+1)
		}
	})
}

// A holder that is alive renews (each renewal is a new version of the row):
// the count starts again from each version, so a live holder is never
// taken over however many calls wait for it.
func TestRenewingHolderIsNotTakenOverAcrossCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, holderProc, waiter := twoProcesses(dynamolease.Options{})
		holder, err := holderProc.Acquire(context.Background(), "b/k", "*", nil)
		if err != nil {
			t.Fatal(err)
		}
		stop := holder.KeepAlive(context.Background())
		for range 12 { // two minutes of 10 s budgets
			if _, err := waiter.Acquire(context.Background(), "b/k", "*", nil); !errors.Is(err, dynamolease.ErrWaitBudgetExceeded) {
				t.Fatalf("Acquire against a renewing holder: %v, want ErrWaitBudgetExceeded", err)
			}
		}
		stop()
		select {
		case <-holder.Lost():
			t.Fatal("the live holder lost its lease")
		default:
		}
		// Once it stops renewing (it crashed), the count starts from the
		// last version seen.
		lastRenewal := time.Now()
		if _, n := retryUntilLease(t, waiter, "b/k", 0, 20); n == 0 {
			t.Fatal("taken over by the first call after the holder stopped renewing")
		}
		if took := time.Since(lastRenewal); took < defaultTakeover-holderProc.Options().Timeout/2 {
			t.Fatalf("taken over %s after the holder's last renewal", took)
		}
	})
}

// Another process's takeover, between two of our calls, is a new version:
// our count restarts from it.
func TestRowChangedBetweenCallsRestartsTheCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tbl := dynamolease.NewMemTable()
		crashed := dynamolease.NewCommitter(tbl, dynamolease.Options{}, zerolog.Nop())
		waiter := dynamolease.NewCommitter(tbl, dynamolease.Options{}, zerolog.Nop())
		if _, err := crashed.Acquire(context.Background(), "b/k", "*", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := waiter.Acquire(context.Background(), "b/k", "*", nil); !errors.Is(err, dynamolease.ErrWaitBudgetExceeded) {
			t.Fatalf("first Acquire: %v", err)
		}
		// A third process took the row over (it had waited long enough)
		// and crashed in turn.
		row, err := tbl.Get(context.Background(), "b/k", "*")
		if err != nil || row == nil {
			t.Fatalf("read the row: %v, %v", row, err)
		}
		next := *row
		next.Generation++
		next.Owner = "third-process"
		if _, err := tbl.Replace(context.Background(), next, row.Generation); err != nil {
			t.Fatal(err)
		}
		// Nobody here asks for a while: the first call after the change
		// sees the new version first, and counts from then.
		time.Sleep(defaultTakeover - 10*time.Second)
		firstSeenAgain := time.Now()
		lease, _ := retryUntilLease(t, waiter, "b/k", 0, 20)
		if took := time.Since(firstSeenAgain); took < defaultTakeover {
			t.Fatalf("taken over %s after this process first saw the new version; want ≥ %s", took, defaultTakeover)
		}
		if lease.Generation() != next.Generation+1 {
			t.Fatalf("generation %d, want %d", lease.Generation(), next.Generation+1)
		}
	})
}

package dynamolease_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
)

// A dead holder's row whose TTL passes while a waiter watches it is swept
// and created anew by another process, between the waiter's last read and
// its due takeover. The takeover is conditional on the generation the
// waiter saw; were every row born at generation 0, it would win over the
// new holder's live lease and two processes would write. With a random
// first generation the new row is another one to that condition: the
// waiter waits for its holder. (Under the build tag
// s3cond_unsafe_generation_zero this test fails: the waiter takes the live
// lease.)
func TestRowSweptAndCreatedAnewIsNotTakenOverByAWaiterOfTheOldOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		opts := dynamolease.Options{Timeout: 10 * time.Second, MaxClockSkewRate: 3, PollInterval: 10 * time.Second,
			TTL: 35 * time.Second, WaitBudget: 2 * time.Minute}
		tbl := dynamolease.NewMemTable()
		dead := dynamolease.NewCommitter(tbl, opts, zerolog.Nop())
		waiter := dynamolease.NewCommitter(tbl, opts, zerolog.Nop())
		next := dynamolease.NewCommitter(tbl, opts, zerolog.Nop())
		if _, err := dead.Acquire(context.Background(), "b/k", "*", nil); err != nil {
			t.Fatal(err)
		}
		// The waiter first sees the dead row 10 s after it was written: it
		// reads it at 10, 20 and 30 s, and its takeover is due at 40 s.
		time.Sleep(10 * time.Second)
		type result struct {
			lease *dynamolease.Lease
			err   error
		}
		waited := make(chan result, 1)
		go func() {
			l, err := waiter.Acquire(context.Background(), "b/k", "*", nil)
			waited <- result{l, err}
		}()
		// At 36 s the row's TTL (35 s) has passed: the sweep takes it, and
		// another process creates the row anew and holds it.
		time.Sleep(26 * time.Second)
		if n := tbl.Sweep(time.Now()); n != 1 {
			t.Fatalf("the sweep deleted %d rows, want the dead holder's", n)
		}
		live, err := next.Acquire(context.Background(), "b/k", "*", nil)
		if err != nil {
			t.Fatal(err)
		}
		// Past the waiter's due takeover: it must still be waiting.
		time.Sleep(5 * time.Second)
		select {
		case r := <-waited:
			if r.err == nil {
				t.Fatalf("the waiter of the swept row took generation %d over at 40 s while another process held the row anew (generation %d)",
					r.lease.Generation(), live.Generation())
			}
			t.Fatalf("the waiter of the swept row: %v, want it waiting", r.err)
		default:
		}
		if err := live.Renew(context.Background()); err != nil {
			t.Fatalf("the new holder's renewal: %v; its lease was taken over", err)
		}
		if err := live.Release(context.Background()); err != nil {
			t.Fatal(err)
		}
		r := <-waited
		if r.err != nil {
			t.Fatalf("the waiter once the new holder released: %v", r.err)
		}
		if r.lease.Generation() != live.Generation()+1 {
			t.Fatalf("the waiter took generation %d, want the released row's %d + 1", r.lease.Generation(), live.Generation())
		}
	})
}

package dynamolease_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
)

// Two processes that name themselves alike (containers with one hostname,
// both s3cond as PID 1; or one container restarted in place) must not take
// each other's rows for their own: each Committer's random token tells them
// apart. The second one here waits for the first one's lease instead of
// counting the failed create as won.
func TestCommittersWithOneOwnerNameDoNotShareLeases(t *testing.T) {
	for name, detail := range map[string]string{
		"two processes with one hostname and PID": "a second process",
		"one process restarted in place":          "the restarted process",
	} {
		t.Run(name, func(t *testing.T) {
			table := dynamolease.NewMemTable()
			opts := fastOptions()
			opts.Owner = "s3cond-0:1" // what DefaultOwner says for PID 1 in a container named s3cond-0
			opts.Timeout = time.Hour  // the first holder's lease never goes stale in this test
			opts.WaitBudget = 300 * time.Millisecond
			ctx := testContext(t, 10*time.Second)

			first := dynamolease.NewCommitter(table, opts, zerolog.Nop())
			held, err := first.Acquire(ctx, "b/k", "*", nil)
			if err != nil {
				t.Fatal(err)
			}
			row, err := table.Get(ctx, "b/k", "*")
			if err != nil || row == nil {
				t.Fatalf("row %+v, %v", row, err)
			}

			second := dynamolease.NewCommitter(table, opts, zerolog.Nop())
			lease, err := second.Acquire(ctx, "b/k", "*", nil)
			if err == nil {
				_ = lease.Release(ctx)
				t.Fatalf("%s with the same owner name took the held lease (row owner %q) as its own", detail, row.Owner)
			}
			if !errors.Is(err, dynamolease.ErrWaitBudgetExceeded) {
				t.Fatalf("Acquire: %v, want ErrWaitBudgetExceeded", err)
			}
			if !strings.HasPrefix(row.Owner, opts.Owner+"#") {
				t.Fatalf("row owner %q: want %q, a token and the attempt", row.Owner, opts.Owner)
			}
			if err := held.Release(ctx); err != nil {
				t.Fatalf("the first holder's release: %v", err)
			}
		})
	}
}

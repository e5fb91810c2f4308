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

// A row born at generation 0 (a previous release's, or arrow-rs's) is
// swept at its TTL between the waiter's last poll and its due takeover,
// and another writer of that kind creates the key anew, at generation 0
// again. The waiter's takeover, sent without a fresh read, must not take
// the new row: it was fenced on the row it saw (owner, TTL, timeout), not
// on the generation alone. Under the tag s3cond_unsafe_generation_only_takeover
// this test fails.
func TestDueTakeoverDoesNotTakeARowBornAtZeroCreatedSinceTheLastPoll(t *testing.T) {
	for name, owners := range map[string][2]string{
		"previous-release rows": {"old-release/1", "old-release/2"},
		"arrow-rs rows":         {"", ""},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tbl := dynamolease.NewMemTable()
				opts := dynamolease.Options{Timeout: 20 * time.Second, MaxClockSkewRate: 3,
					PollInterval: 50 * time.Second, WaitBudget: 70 * time.Second}
				waiter := dynamolease.NewCommitter(tbl, opts, zerolog.Nop())
				start := time.Now()
				dead := dynamolease.Record{Path: "b/k", ETag: "*", Timeout: opts.Timeout, Owner: owners[0], TTL: start.Add(54 * time.Second)}
				if _, err := tbl.Create(context.Background(), dead); err != nil {
					t.Fatal(err)
				}
				result := make(chan error, 1)
				go func() {
					lease, err := waiter.Acquire(context.Background(), "b/k", "*", nil)
					if err == nil {
						err = errors.New("took the lease")
						_ = lease.Release(context.Background())
					}
					result <- err
				}()
				// The waiter polled at 50 s; its takeover falls due at 60 s.
				time.Sleep(55 * time.Second)
				if swept := tbl.Sweep(time.Now()); swept != 1 {
					t.Fatalf("swept %d rows, want the dead holder's", swept)
				}
				live := dynamolease.Record{Path: "b/k", ETag: "*", Timeout: opts.Timeout, Owner: owners[1], TTL: time.Now().Add(time.Hour)}
				if _, err := tbl.Create(context.Background(), live); err != nil {
					t.Fatal(err)
				}
				if err := <-result; !errors.Is(err, dynamolease.ErrWaitBudgetExceeded) {
					t.Fatalf("the waiter of the swept row: %v; want ErrWaitBudgetExceeded (the new row is live)", err)
				}
				row, err := tbl.Get(context.Background(), "b/k", "*")
				if err != nil || row == nil || row.Generation != 0 || row.Owner != live.Owner || !row.TTL.Equal(dynamolease.Normalise(live).TTL) {
					t.Fatalf("the live row is now %+v, %v; want it untouched", row, err)
				}
			})
		})
	}
}

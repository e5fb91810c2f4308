package dynamolease_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
)

// A holder that vanished during a long store write (AcquireSized) is taken
// over only its own lease length × skew after its row was first seen, by a
// process whose own lease.timeout is the short default: the row says how
// long to wait, not the waiter's settings.
func TestSizedLeaseOfAVanishedHolderIsTakenOverAfterItsOwnLength(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tbl := dynamolease.NewMemTable()
		crashed := dynamolease.NewCommitter(tbl, dynamolease.Options{}, zerolog.Nop())
		waiter := dynamolease.NewCommitter(tbl, dynamolease.Options{}, zerolog.Nop())
		const sized = 5 * time.Minute
		held, err := crashed.AcquireSized(context.Background(), "b/k", "*", time.Time{}, sized, nil)
		if err != nil {
			t.Fatal(err)
		}
		if held.Timeout() != sized {
			t.Fatalf("lease length %s, want %s", held.Timeout(), sized)
		}
		row, err := tbl.Get(context.Background(), "b/k", "*")
		if err != nil || row == nil || row.Timeout != sized {
			t.Fatalf("row %+v, %v; want timeout %s on it", row, err, sized)
		}
		if minTTL := 2 * sized * 3; time.Until(row.TTL) < minTTL {
			t.Fatalf("row TTL in %s; want at least %s, or the table could drop it while it guards a write", time.Until(row.TTL), minTTL)
		}
		start := time.Now()
		_, budgetsSpent := retryUntilLease(t, waiter, "b/k", 0, 100)
		took := time.Since(start)
		if want := sized * 3; took < want || took > want+waiter.Options().PollInterval {
			t.Fatalf("taken over after %s (%d × 409); want the row's own timeout × skew = %s", took, budgetsSpent, want)
		}
	})
}

// A length beyond what a reader believes a row carries is cut to it, so no
// reader takes the row for unusable (and holds it only for its own timeout).
func TestSizedLeaseIsCutToTheLongestARowCarries(t *testing.T) {
	tbl := dynamolease.NewMemTable()
	c := dynamolease.NewCommitter(tbl, dynamolease.Options{}, zerolog.Nop())
	l, err := c.AcquireSized(context.Background(), "b/k", "*", time.Time{}, 100*time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l.Timeout() != dynamolease.MaxSizedTimeout {
		t.Fatalf("lease length %s, want MaxSizedTimeout %s", l.Timeout(), dynamolease.MaxSizedTimeout)
	}
}

// A sized lease is renewed with its own length, so a live holder keeps a
// long write guarded; and a length below Options.Timeout is raised to it.
func TestSizedLeaseRenewsWithItsLengthAndNeverShrinks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tbl := dynamolease.NewMemTable()
		c := dynamolease.NewCommitter(tbl, dynamolease.Options{}, zerolog.Nop())
		short, err := c.AcquireSized(context.Background(), "b/short", "*", time.Time{}, time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		if short.Timeout() != c.Options().Timeout {
			t.Fatalf("lease length %s for a shorter size; want Options.Timeout %s", short.Timeout(), c.Options().Timeout)
		}
		const sized = 2 * time.Minute
		l, err := c.AcquireSized(context.Background(), "b/k", "*", time.Time{}, sized, nil)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(sized / 2)
		if err := l.Renew(context.Background()); err != nil {
			t.Fatal(err)
		}
		row, err := tbl.Get(context.Background(), "b/k", "*")
		if err != nil || row == nil || row.Generation != 1 || row.Timeout != sized {
			t.Fatalf("row after renewal %+v, %v; want generation 1 with timeout %s", row, err, sized)
		}
		if l.Remaining() != sized {
			t.Fatalf("remaining after renewal %s, want %s", l.Remaining(), sized)
		}
	})
}

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

// A holder that vanished during a long store write (its lease extended) is
// taken over only its own lease length × skew after its row was first
// seen, by a process whose own lease.timeout is the short default: the row
// says how long to wait, not the waiter's settings.
func TestExtendedLeaseOfAVanishedHolderIsTakenOverAfterItsOwnLength(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tbl := dynamolease.NewMemTable()
		crashed := dynamolease.NewCommitter(tbl, dynamolease.Options{}, zerolog.Nop())
		waiter := dynamolease.NewCommitter(tbl, dynamolease.Options{}, zerolog.Nop())
		held, err := crashed.Acquire(context.Background(), "b/k", "*", nil)
		if err != nil {
			t.Fatal(err)
		}
		const sized = 5 * time.Minute
		if err := held.Extend(context.Background(), sized); err != nil {
			t.Fatal(err)
		}
		if held.Timeout() != sized || held.Remaining() != sized {
			t.Fatalf("lease length %s, remaining %s; want %s", held.Timeout(), held.Remaining(), sized)
		}
		row, err := tbl.Get(context.Background(), "b/k", "*")
		if err != nil || row == nil || row.Timeout != sized || row.Generation != held.Generation() {
			t.Fatalf("row %+v, %v; want generation %d with timeout %s on it", row, err, held.Generation(), sized)
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

// An extended lease renews with its own length, so a live holder keeps a
// long write guarded; Extend never shortens a lease, and stops at
// MaxSizedTimeout, beyond which a reader would take the row for unusable.
func TestExtendedLeaseRenewsWithItsLengthAndNeverShrinks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tbl := dynamolease.NewMemTable()
		c := dynamolease.NewCommitter(tbl, dynamolease.Options{}, zerolog.Nop())
		l, err := c.Acquire(context.Background(), "b/k", "*", nil)
		if err != nil {
			t.Fatal(err)
		}
		born := l.Generation()
		if err := l.Extend(context.Background(), time.Second); err != nil || l.Timeout() != c.Options().Timeout || l.Generation() != born {
			t.Fatalf("Extend to a shorter length: %v, length %s, generation %d; want a no-op", err, l.Timeout(), l.Generation())
		}
		const sized = 2 * time.Minute
		if err := l.Extend(context.Background(), sized); err != nil {
			t.Fatal(err)
		}
		time.Sleep(sized / 2)
		if err := l.Renew(context.Background()); err != nil {
			t.Fatal(err)
		}
		row, err := tbl.Get(context.Background(), "b/k", "*")
		if err != nil || row == nil || row.Generation != born+2 || row.Timeout != sized {
			t.Fatalf("row after renewal %+v, %v; want generation %d with timeout %s", row, err, born+2, sized)
		}
		if err := l.Extend(context.Background(), 100*time.Hour); err != nil || l.Timeout() != dynamolease.DefaultSizedLeaseCap {
			t.Fatalf("Extend past the cap on sized leases: %v, length %s; want %s", err, l.Timeout(), dynamolease.DefaultSizedLeaseCap)
		}
	})
}

// failingTable stands for a lease table that stops answering (DynamoDB
// throttling, etcd without quorum): every write fails.
type failingTable struct{ dynamolease.Table }

var errTableDown = errors.New("table down")

func (failingTable) Replace(context.Context, dynamolease.Record, uint64) (*dynamolease.Record, error) {
	return nil, errTableDown
}

// An Extend the table does not confirm leaves the lease its old length
// here: the row may carry either, so the earlier deadline is the one kept.
func TestFailedExtendKeepsTheOldLength(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tbl := dynamolease.NewMemTable()
		c := dynamolease.NewCommitter(failingTable{tbl}, dynamolease.Options{}, zerolog.Nop())
		l, err := c.Acquire(context.Background(), "b/k", "*", nil)
		if err != nil {
			t.Fatal(err)
		}
		deadline := l.Deadline()
		if err := l.Extend(context.Background(), time.Hour); err == nil {
			t.Fatal("Extend on a failing table succeeded")
		}
		if l.Timeout() != c.Options().Timeout || !l.Deadline().Equal(deadline) {
			t.Fatalf("after a failed Extend: length %s, deadline moved by %s; want the old ones", l.Timeout(), l.Deadline().Sub(deadline))
		}
	})
}

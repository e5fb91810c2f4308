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

// Confirm reads the row only when the lease's last confirmation is older
// than the plain timeout (a sized lease between its renewals): a fresh
// lease costs nothing; a row still the holder's confirms it; a row an
// operator released meanwhile makes the lease lost (issue 33 finding 5).
func TestConfirmReadsAStaleSizedLeaseAndFindsItReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tbl := &countingTable{Table: dynamolease.NewMemTable()}
		c := dynamolease.NewCommitter(tbl, dynamolease.Options{Timeout: time.Second, SizedLeaseCap: time.Minute}, zerolog.Nop())
		l, err := c.Acquire(context.Background(), "b/k", "*", nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Extend(context.Background(), time.Minute); err != nil {
			t.Fatal(err)
		}
		gets := tbl.gets.Load()
		if err := l.Confirm(context.Background()); err != nil || tbl.gets.Load() != gets {
			t.Fatalf("Confirm of a lease confirmed just now: %v, %d reads; want nil and none", err, tbl.gets.Load()-gets)
		}
		time.Sleep(2 * time.Second) // past the plain timeout, well within the sized lease
		if err := l.Confirm(context.Background()); err != nil || tbl.gets.Load() != gets+1 {
			t.Fatalf("Confirm of a held lease last confirmed 2 s ago: %v, %d reads; want nil and one", err, tbl.gets.Load()-gets)
		}
		if _, err := dynamolease.ReleaseRow(context.Background(), tbl, "b/k", "*", l.Generation()); err != nil {
			t.Fatal(err)
		}
		if err := l.Confirm(context.Background()); !errors.Is(err, dynamolease.ErrLeaseLost) {
			t.Fatalf("Confirm of a lease an operator released: %v, want ErrLeaseLost", err)
		}
		select {
		case <-l.Lost():
		default:
			t.Fatal("the released lease is not marked lost")
		}
	})
}

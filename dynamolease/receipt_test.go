package dynamolease_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
)

// A released lease carries its receipt; a retry reading the row while the
// holder still has it waits for the release.
func TestReceiptIsRecordedOnReleaseAndAwaitedWhileHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, first, second := twoProcesses(fastOptions())
		l := mustAcquire(t, first, "b/k", "*")
		l.RecordReceipt("first attempt's answer")
		read := make(chan string)
		go func() {
			text, err := second.Receipt(context.Background(), "b/k", "*")
			if err != nil {
				t.Errorf("Receipt: %v", err)
			}
			read <- text
		}()
		time.Sleep(time.Second) // the reader polls a held row
		synctest.Wait()
		select {
		case text := <-read:
			t.Fatalf("Receipt answered %q while the row was held", text)
		default:
		}
		if err := l.Release(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := <-read; got != "first attempt's answer" {
			t.Fatalf("Receipt = %q after the release", got)
		}
	})
}

// A receipt survives the holders that do not commit: the loser of the
// race on the same expected ETag takes the released row over, re-checks,
// fails and releases; a plain holder and a batch release (ReleaseAll) do
// the same; each writes the receipt back. A holder that records its own
// replaces it.
func TestReceiptIsCarriedByHoldersThatDoNotCommit(t *testing.T) {
	ctx := context.Background()
	_, first, second := twoProcesses(fastOptions())
	winner := mustAcquire(t, first, "b/k", `"e1"`)
	winner.RecordReceipt("winner's answer")
	if err := winner.Release(ctx); err != nil {
		t.Fatal(err)
	}
	lost := errors.New("precondition failed")
	tookOver := false
	_, err := second.Acquire(ctx, "b/k", `"e1"`, func(context.Context) error {
		if tookOver {
			return lost // the re-check under the lease: the key moved on
		}
		tookOver = true
		return nil
	})
	if !errors.Is(err, lost) || !tookOver {
		t.Fatalf("the loser's Acquire = %v (took over: %v), want its re-check's failure", err, tookOver)
	}
	if got, _ := first.Receipt(ctx, "b/k", `"e1"`); got != "winner's answer" {
		t.Fatalf("after the loser's release Receipt = %q, want the winner's", got)
	}
	plain := mustAcquire(t, second, "b/k", `"e1"`)
	if errs := second.ReleaseAll(ctx, []*dynamolease.Lease{plain}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	if got, _ := first.Receipt(ctx, "b/k", `"e1"`); got != "winner's answer" {
		t.Fatalf("after a batch release Receipt = %q, want the winner's", got)
	}
	committer := mustAcquire(t, first, "b/k", `"e1"`)
	committer.RecordReceipt("a later commit's answer")
	if err := committer.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := second.Receipt(ctx, "b/k", `"e1"`); got != "a later commit's answer" {
		t.Fatalf("Receipt = %q, want the later commit's own", got)
	}
}

// A receipt answers for Options.TTL from when it was recorded, however
// often holders carry it forward and so refresh the row's own TTL.
func TestCarriedReceiptEndsAtItsOwnTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		opts := fastOptions()
		opts.TTL = time.Hour
		_, first, second := twoProcesses(opts)
		l := mustAcquire(t, first, "b/k", "*")
		l.RecordReceipt("answer")
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			time.Sleep(opts.TTL/3 + time.Second)
			carrier := mustAcquire(t, second, "b/k", "*")
			if err := carrier.Release(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if got, _ := first.Receipt(ctx, "b/k", "*"); got != "" {
			t.Fatalf("Receipt = %q past its own time on a row its carriers kept alive", got)
		}
	})
}

// A receipt row answers for the table's row TTL, then not at all, even if
// the table has not swept it yet (DynamoDB's TTL sweep lags by days); a
// second write of the same name finds the first and leaves it.
func TestReceiptRowAnswersForItsTTLAndKeepsTheFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		opts := fastOptions()
		opts.TTL = time.Hour
		_, first, second := twoProcesses(opts)
		ctx := context.Background()
		if earlier, err := first.PutReceipt(ctx, "b/k", "complete u1", "first"); err != nil || earlier != "" {
			t.Fatalf("PutReceipt = %q, %v", earlier, err)
		}
		if earlier, err := second.PutReceipt(ctx, "b/k", "complete u1", "second"); err != nil || earlier != "first" {
			t.Fatalf("a second PutReceipt = %q, %v; want the first's receipt", earlier, err)
		}
		if got, _ := second.ReceiptRow(ctx, "b/k", "complete u1"); got != "first" {
			t.Fatalf("ReceiptRow = %q, want the first", got)
		}
		time.Sleep(opts.TTL + 2*time.Second)
		if got, _ := second.ReceiptRow(ctx, "b/k", "complete u1"); got != "" {
			t.Fatalf("ReceiptRow past the row's TTL = %q, want none", got)
		}
		if earlier, err := second.PutReceipt(ctx, "b/k", "complete u1", "third"); err != nil || earlier != "" {
			t.Fatalf("PutReceipt over an expired row = %q, %v", earlier, err)
		}
		if got, _ := first.ReceiptRow(ctx, "b/k", "complete u1"); got != "third" {
			t.Fatalf("ReceiptRow = %q, want the row written anew", got)
		}
	})
}

// A receipt longer than MaxReceiptLength is not recorded.
func TestReceiptLongerThanTheBoundIsNotRecorded(t *testing.T) {
	_, first, _ := twoProcesses(fastOptions())
	long := string(make([]byte, dynamolease.MaxReceiptLength+1))
	if _, err := first.PutReceipt(context.Background(), "b/k", "big", long); err != nil {
		t.Fatal(err)
	}
	if got, _ := first.ReceiptRow(context.Background(), "b/k", "big"); got != "" {
		t.Fatalf("a receipt of %d bytes was recorded", len(got))
	}
}

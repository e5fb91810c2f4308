package dynamolease_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
)

// A released lease carries its receipt; a retry reading the row while the
// holder still has it waits for the release; the next holder's takeover
// clears it.
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
		next := mustAcquire(t, second, "b/k", "*")
		defer next.Release(context.Background())
		if got, _ := first.Receipt(context.Background(), "b/k", "*"); got != "" {
			t.Fatalf("a row taken over still answers receipt %q", got)
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

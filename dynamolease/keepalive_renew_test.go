package dynamolease_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
)

// landingRenewalTable stands for a DynamoDB whose answer to a renewal
// comes late: the renewal is applied once proceed is closed, whatever
// became of its caller meanwhile, and answers the caller's context error
// if that ended (the SDK gave up on an answer the table still sent).
type landingRenewalTable struct {
	*dynamolease.MemTable
	renewing chan struct{} // closed when a renewal arrives
	proceed  chan struct{}
}

func (l *landingRenewalTable) Replace(ctx context.Context, r dynamolease.Record, seen uint64) (*dynamolease.Record, error) {
	if r.Released {
		return l.MemTable.Replace(ctx, r, seen)
	}
	close(l.renewing)
	<-l.proceed
	current, err := l.MemTable.Replace(context.Background(), r, seen)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return current, err
}

// TestReleaseWaitsForARenewalInFlight: KeepAlive's stop, called while a
// renewal is at the table, lets that renewal finish instead of cutting it
// short, so the release that follows writes the generation it left and
// finds the lease its own. Before, the cancelled renewal still landed, and
// the release found the row a generation ahead: "lost" (issue 24 item 6:
// 96 of 500 DeleteObjects leases).
func TestReleaseWaitsForARenewalInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		table := &landingRenewalTable{MemTable: dynamolease.NewMemTable(), renewing: make(chan struct{}), proceed: make(chan struct{})}
		c := dynamolease.NewCommitter(table, fastOptions(), zerolog.Nop())
		lease, err := c.Acquire(context.Background(), "b/k", "*", nil)
		if err != nil {
			t.Fatal(err)
		}
		born := lease.Generation()
		stop := lease.KeepAlive(context.Background())
		<-table.renewing // half the lease has passed: the renewal is at the table
		stopped := make(chan struct{})
		go func() {
			stop()
			close(stopped)
		}()
		synctest.Wait() // stop has cancelled what it cancels, and waits
		close(table.proceed)
		<-stopped
		if err := lease.Release(context.Background()); err != nil {
			t.Fatalf("Release after a renewal in flight: %v", err)
		}
		row, err := table.Get(context.Background(), "b/k", "*")
		if err != nil || row == nil || !row.Released || row.Generation != born+1 {
			t.Fatalf("row after the release = %+v, %v; want generation %d (the renewal's), released", row, err, born+1)
		}
	})
}

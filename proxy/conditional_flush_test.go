package proxy

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/dynamolease"
)

// slowReleaseTable is the in-memory lease table with releases that wait for
// a signal, standing for a lease store whose release write is slow.
type slowReleaseTable struct {
	dynamolease.Table
	releasing chan struct{}
	proceed   chan struct{}
}

func (s *slowReleaseTable) Replace(ctx context.Context, r dynamolease.Record, seen uint64) (*dynamolease.Record, error) {
	if r.Released {
		s.releasing <- struct{}{}
		<-s.proceed
	}
	return s.Table.Replace(ctx, r, seen)
}

// TestConditionalAnswerDoesNotWaitForTheRelease checks that a conditional
// write's client has its answer while the lease is still being released
// (the next write on the key expects the new ETag and leases another row),
// and that WaitForReleases waits for that release.
func TestConditionalAnswerDoesNotWaitForTheRelease(t *testing.T) {
	table := &slowReleaseTable{Table: dynamolease.NewMemTable(), releasing: make(chan struct{}, 1), proceed: make(chan struct{})}
	f := newFixtureWith(t, fixtureOptions{leaseTable: table})
	// Let the release finish before the fixture's servers close, whatever
	// the outcome (cleanups run last-registered first).
	var let sync.Once
	letRelease := func() { let.Do(func() { close(table.proceed) }) }
	t.Cleanup(letRelease)
	answered := make(chan error, 1)
	go func() {
		_, err := f.put(t, "flushed", "v1", func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") })
		answered <- err
	}()
	select {
	case <-table.releasing:
	case <-time.After(5 * time.Second):
		t.Fatal("the conditional write never released its lease")
	}
	select {
	case err := <-answered:
		if err != nil {
			t.Fatalf("conditional create: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the client got no answer while the release was pending")
	}
	// The handler has returned with the release still running in the
	// background; shutdown waits for it.
	p := f.handler.(*Proxy)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := p.WaitForReleases(ctx); err == nil {
		t.Fatal("WaitForReleases returned while a release was still pending")
	}
	letRelease()
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.WaitForReleases(ctx); err != nil {
		t.Fatalf("WaitForReleases after the release was let go: %v", err)
	}
}

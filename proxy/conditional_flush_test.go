package proxy

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/dynamolease/leasetest"
)

// slowReleaseTable is the in-memory lease table with releases that say so on
// releasing and wait for proceed, standing for a lease store whose release
// write is slow.
func slowReleaseTable(releasing chan<- struct{}, proceed <-chan struct{}) *leasetest.Table {
	return leasetest.NewPlain(leasetest.Hooks{Before: func(_ context.Context, c leasetest.Call) error {
		if c.Op == leasetest.OpReplace && c.Released {
			releasing <- struct{}{}
			<-proceed
		}
		return nil
	}})
}

// TestConditionalAnswerDoesNotWaitForTheRelease checks that a conditional
// write's client has its answer while the lease is still being released
// (the next write on the key expects the new ETag and leases another row),
// and that WaitForReleases waits for that release.
func TestConditionalAnswerDoesNotWaitForTheRelease(t *testing.T) {
	releasing, proceed := make(chan struct{}, 1), make(chan struct{})
	f := newFixtureWith(t, fixtureOptions{leaseTable: slowReleaseTable(releasing, proceed)})
	// Let the release finish before the fixture's servers close, whatever
	// the outcome (cleanups run last-registered first).
	var let sync.Once
	letRelease := func() { let.Do(func() { close(proceed) }) }
	t.Cleanup(letRelease)
	answered := make(chan error, 1)
	go func() {
		_, err := f.put(t, "flushed", "v1", func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") })
		answered <- err
	}()
	select {
	case <-releasing:
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

package proxy

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// holdLease takes the lease a conditional writer of the key's current
// version would hold, as another writer in flight would.
func holdLease(t *testing.T, f *fixture, key string) func() {
	t.Helper()
	head, err := f.client.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(bucketName), Key: aws.String(key)})
	if err != nil {
		t.Fatal(err)
	}
	lease, err := f.leases.Acquire(context.Background(), bucketName+"/"+key, *head.ETag, nil)
	if err != nil {
		t.Fatal(err)
	}
	return func() { _ = lease.Release(context.Background()) }
}

func putInBackground(f *fixture, t *testing.T, key, body string) <-chan error {
	done := make(chan error, 1)
	go func() { _, err := f.put(t, key, body, nil); done <- err }()
	return done
}

func TestStrictModeUnconditionalWriteWaitsForTheLease(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{strict: true})
	if _, err := f.put(t, "ledger", "v1", nil); err != nil {
		t.Fatal(err)
	}
	release := holdLease(t, f, "ledger")
	done := putInBackground(f, t, "ledger", "v2")
	select {
	case err := <-done:
		t.Fatalf("unconditional PUT finished (%v) while a conditional writer held the lease", err)
	case <-time.After(300 * time.Millisecond):
	}
	release()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("PUT after release: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("PUT did not proceed after the lease was released")
	}
	if got, _ := f.get(t, "ledger"); got != "v2" {
		t.Fatalf("stored %q, want v2", got)
	}
}

func TestDefaultModeUnconditionalWriteTakesNoLease(t *testing.T) {
	f := newFixture(t, false)
	if _, err := f.put(t, "k", "v1", nil); err != nil {
		t.Fatal(err)
	}
	release := holdLease(t, f, "k")
	defer release()
	select {
	case err := <-putInBackground(f, t, "k", "v2"):
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("an unconditional PUT waited for a lease without strict mode")
	}
}

func TestStrictModeDeleteAndCreateOfAMissingKey(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{strict: true})
	if _, err := f.put(t, "fresh", "v1", nil); err != nil {
		t.Fatalf("unconditional create in strict mode: %v", err)
	}
	if _, err := f.client.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String(bucketName), Key: aws.String("fresh")}); err != nil {
		t.Fatalf("unconditional delete in strict mode: %v", err)
	}
	if _, err := f.get(t, "fresh"); errorCode(err) != "NoSuchKey" {
		t.Fatalf("after delete: %v", err)
	}
}

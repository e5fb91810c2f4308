package proxy

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/dynamolease/leasetest"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
)

// holdCopies holds every CopyObject at the store (gofakes3) until release
// is closed, and says on reached when one arrived: a store still copying a
// large source.
func holdCopies(reached chan<- struct{}, release <-chan struct{}) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") != "" {
				reached <- struct{}{}
				<-release
			}
			next.ServeHTTP(w, r)
		})
	}
}

// TestReleasedSizedLeaseIsNotAnsweredAsASuccess: an operator releases (s3cond
// leases release, forced) the sized lease of a conditional CopyObject the
// store is still doing; its next renewal would come only at half its 32 s
// length. The holder must not relay the store's 200 (issue 33 finding 5:
// the copy answered 200 after a second writer's create was acknowledged on
// the key): its lease, last confirmed longer ago than lease.timeout, is
// read before the answer, found released, and the answer is 500, the lease
// counted lost. Without the read (Lease.Confirm) the answer is 200.
func TestReleasedSizedLeaseIsNotAnsweredAsASuccess(t *testing.T) {
	const timeout = 200 * time.Millisecond
	reached, release := make(chan struct{}, 1), make(chan struct{})
	f := newGuardFixture(t, guardOptions{wrap: holdCopies(reached, release), lease: leasetest.Timing{Timeout: timeout,
		PollInterval: 10 * time.Millisecond, WaitBudget: time.Second}})
	f.proxy.tuneLeases(func(o *leasedwrite.Options) { o.MinStoreThroughput = 64 << 10 }) // 2 MiB: a 32 s lease
	ctx := t.Context()
	if _, err := f.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucketName), Key: aws.String("src"),
		Body: bytes.NewReader(make([]byte, 2<<20))}); err != nil {
		t.Fatal(err)
	}
	answered := make(chan error, 1)
	go func() {
		_, err := f.client.CopyObject(context.Background(), &s3.CopyObjectInput{Bucket: aws.String(bucketName), Key: aws.String("dst"),
			CopySource: aws.String(bucketName + "/src"), IfNoneMatch: aws.String("*")}, func(o *s3.Options) { o.RetryMaxAttempts = 1 })
		answered <- err
	}()
	<-reached
	copyAt := time.Now()
	row := f.table.Row(t, bucketName+"/dst", "*")
	if row == nil || row.Timeout < 30*time.Second {
		t.Fatalf("the copy's lease row %+v; want a sized lease", row)
	}
	if err := f.table.ForceRelease(ctx, bucketName+"/dst", "*", row.Generation); err != nil {
		t.Fatal(err)
	}
	// The holder's last confirmation (the extension, before the copy was
	// sent) must be older than lease.timeout when the store answers.
	time.Sleep(time.Until(copyAt.Add(timeout)))
	close(release)
	err := <-answered
	if code := errorCode(err); code != "InternalError" {
		t.Fatalf("a copy whose lease was released while the store did it: %v (code %q), want InternalError", err, code)
	}
}

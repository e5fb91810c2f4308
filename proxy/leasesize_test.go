package proxy

import (
	"bytes"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3cond/s3cond/proxy/leasedwrite"
)

// sizedFixture is the proxy in front of gofakes3 with a store throughput
// of 64 KiB/s assumed, so a MiB of work adds 16 s to the 5 s lease.
func sizedFixture(t *testing.T) *guardFixture {
	f := newGuardFixture(t, guardOptions{})
	f.proxy.tuneLeases(func(o *leasedwrite.Options) { o.MinStoreThroughput = 64 << 10 })
	return f
}

// leaseRowTimeout is the lease length on key's create row, as every process
// of a fleet reads it before a takeover.
func leaseRowTimeout(t *testing.T, f *guardFixture, key string) time.Duration {
	t.Helper()
	row := f.table.Row(t, bucketName+"/"+key, "*")
	if row == nil {
		t.Fatalf("no lease row of %s", key)
	}
	return row.Timeout
}

// A conditional CopyObject's lease is sized by its source: the store copies
// on after its holder is gone, and the row must stay held until then.
func TestConditionalCopyLeaseIsSizedToItsSource(t *testing.T) {
	f := sizedFixture(t)
	ctx := t.Context()
	const size = 2 << 20
	if _, err := f.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucketName), Key: aws.String("src"),
		Body: bytes.NewReader(make([]byte, size))}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(bucketName), Key: aws.String("dst"),
		CopySource: aws.String(bucketName + "/src"), IfNoneMatch: aws.String("*")}); err != nil {
		t.Fatalf("conditional copy: %v", err)
	}
	if got, want := leaseRowTimeout(t, f, "dst"), 5*time.Second+32*time.Second; got != want {
		t.Fatalf("copy's lease length %s, want lease.timeout + 2 MiB at 64 KiB/s = %s", got, want)
	}
	// A missing source writes nothing: the copy fails as the store says.
	_, err := f.client.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(bucketName), Key: aws.String("dst2"),
		CopySource: aws.String(bucketName + "/absent"), IfNoneMatch: aws.String("*")})
	if code := errorCode(err); code != "NoSuchKey" {
		t.Fatalf("copy of a missing source: %v, want NoSuchKey", err)
	}
}

// A conditional CompleteMultipartUpload's lease is sized by its parts.
func TestConditionalCompleteLeaseIsSizedToItsParts(t *testing.T) {
	f := sizedFixture(t)
	ctx := t.Context()
	up, err := f.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucketName), Key: aws.String("mp")})
	if err != nil {
		t.Fatal(err)
	}
	sizes := []int{5 << 20, 1 << 20}
	var parts []s3types.CompletedPart
	for i, size := range sizes {
		n := int32(i + 1)
		out, err := f.client.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucketName), Key: aws.String("mp"),
			UploadId: up.UploadId, PartNumber: aws.Int32(n), Body: bytes.NewReader(make([]byte, size))})
		if err != nil {
			t.Fatalf("part %d: %v", n, err)
		}
		parts = append(parts, s3types.CompletedPart{PartNumber: aws.Int32(n), ETag: out.ETag})
	}
	if _, err := f.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucketName),
		Key: aws.String("mp"), UploadId: up.UploadId, IfNoneMatch: aws.String("*"),
		MultipartUpload: &s3types.CompletedMultipartUpload{Parts: parts}}); err != nil {
		t.Fatalf("conditional complete: %v", err)
	}
	if got, want := leaseRowTimeout(t, f, "mp"), 5*time.Second+96*time.Second; got != want {
		t.Fatalf("completion's lease length %s, want lease.timeout + 6 MiB at 64 KiB/s = %s", got, want)
	}
}

// A conditional PUT sends its own bytes: its lease stays lease.timeout.
func TestConditionalPutLeaseKeepsTheTimeout(t *testing.T) {
	f := sizedFixture(t)
	if _, err := f.client.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(bucketName), Key: aws.String("put"),
		Body: bytes.NewReader(make([]byte, 1<<20)), IfNoneMatch: aws.String("*")}); err != nil {
		t.Fatal(err)
	}
	if got := leaseRowTimeout(t, f, "put"); got != 5*time.Second {
		t.Fatalf("PUT's lease length %s, want lease.timeout 5s", got)
	}
}

// A store without ListParts (s3rver answers 405) still completes a
// conditional upload: the lease keeps lease.timeout, as for small work.
func TestConditionalCompleteOnAStoreWithoutListParts(t *testing.T) {
	var refused atomic.Int64
	f := newGuardFixture(t, guardOptions{wrap: func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && r.URL.Query().Has("uploadId") {
				refused.Add(1)
				http.Error(w, "", http.StatusMethodNotAllowed)
				return
			}
			next.ServeHTTP(w, r)
		})
	}})
	f.proxy.tuneLeases(func(o *leasedwrite.Options) { o.MinStoreThroughput = 64 << 10 })
	ctx := t.Context()
	up, err := f.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucketName), Key: aws.String("mp")})
	if err != nil {
		t.Fatal(err)
	}
	part, err := f.client.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucketName), Key: aws.String("mp"),
		UploadId: up.UploadId, PartNumber: aws.Int32(1), Body: bytes.NewReader(make([]byte, 1<<20))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucketName),
		Key: aws.String("mp"), UploadId: up.UploadId, IfNoneMatch: aws.String("*"),
		MultipartUpload: &s3types.CompletedMultipartUpload{Parts: []s3types.CompletedPart{{PartNumber: aws.Int32(1), ETag: part.ETag}}}}); err != nil {
		t.Fatalf("conditional complete on a store without ListParts: %v", err)
	}
	if refused.Load() == 0 {
		t.Fatal("the store was never asked for the upload's parts: the test shows nothing")
	}
	if got := leaseRowTimeout(t, f, "mp"); got != 5*time.Second {
		t.Fatalf("completion's lease length %s, want the plain lease.timeout 5s", got)
	}
}

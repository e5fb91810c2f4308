package proxy

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/internal/backendhttp"
)

// noBucketStore stands for a store that does not have the bucket asked
// for: every request gets S3's 404 NoSuchBucket. It counts what it gets.
func noBucketStore(t *testing.T) (*Backend, *atomic.Int32) {
	t.Helper()
	var requests atomic.Int32
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusNotFound)
		if r.Method != http.MethodHead {
			_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message></Error>`))
		}
	}))
	t.Cleanup(server.Close)
	u, _ := url.Parse(server.URL)
	return &Backend{
		Name: "no-bucket", Endpoint: u,
		Client: resigningClient(backendhttp.NewBackendTransport()),
	}, &requests
}

// S3 checks that the bucket exists before it reads a request's headers:
// an UploadPartCopy with a malformed copy source to a bucket that does not
// exist is NoSuchBucket (versitygw's UploadPartCopy_non_existing_bucket).
// s3cond asks the store only on that error path, and only for a key that
// may read the bucket and a request it routed.
func TestValidationErrorOnAMissingBucketIsNoSuchBucket(t *testing.T) {
	missing, missingRequests := noBucketStore(t)
	var bucketHeads atomic.Int32
	f := newFixtureWith(t, fixtureOptions{
		bucketBackends: map[string]*Backend{"nobucket": missing, "granted-nobucket": missing},
		backendHook: func(r *http.Request) {
			if r.Method == http.MethodHead && r.URL.Path == "/"+bucketName {
				bucketHeads.Add(1)
			}
		},
	})
	ctx := context.Background()
	uploadPartCopy := func(client *s3.Client, bucket, source string) error {
		_, err := client.UploadPartCopy(ctx, &s3.UploadPartCopyInput{
			Bucket: aws.String(bucket), Key: aws.String("my-obj"), UploadId: aws.String("uploadId"),
			PartNumber: aws.Int32(1), CopySource: aws.String(source),
		})
		return err
	}

	if err := uploadPartCopy(f.client, "nobucket", "Copy-Source"); errorCode(err) != "NoSuchBucket" {
		t.Errorf("malformed copy source, missing bucket: %v, want NoSuchBucket", err)
	}
	if n := missingRequests.Load(); n != 1 {
		t.Errorf("the store got %d requests, want the one HeadBucket", n)
	}
	// The bucket exists: the header's own error.
	if err := uploadPartCopy(f.client, bucketName, "Copy-Source"); errorCode(err) != "InvalidArgument" {
		t.Errorf("malformed copy source, existing bucket: %v, want InvalidArgument", err)
	}

	// No check for a key without a grant on the bucket (it would learn
	// whether the bucket exists), nor for a request s3cond refuses.
	missingRequests.Store(0)
	other := newClient(f.proxyURL, grantedID)
	if err := uploadPartCopy(other, "nobucket", "Copy-Source"); errorCode(err) != "AccessDenied" {
		t.Errorf("key without a grant: %v, want AccessDenied", err)
	}
	if status, _, _ := signedDo(t, http.MethodGet, f.proxyURL+"/nobucket?no-such-subresource", nil); status != http.StatusNotImplemented {
		t.Errorf("unknown subresource: %d, want 501", status)
	}
	if n := missingRequests.Load(); n != 0 {
		t.Errorf("the store got %d requests for refused requests, want none", n)
	}
	// A key granted the bucket gets the answer.
	if err := uploadPartCopy(other, "granted-nobucket", "bucket/%ZZ"); errorCode(err) != "NoSuchBucket" {
		t.Errorf("granted key, missing bucket: %v, want NoSuchBucket", err)
	}

	// A request that passes s3cond's checks costs no HeadBucket.
	bucketHeads.Store(0)
	if _, err := f.put(t, "k", "v", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucketName)}); err != nil {
		t.Fatal(err)
	}
	if n := bucketHeads.Load(); n != 0 {
		t.Errorf("good requests sent %d HeadBucket, want none", n)
	}
}

package proxy

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// DeleteObject's x-amz-if-match-size and x-amz-if-match-last-modified-time
// are enforced by s3cond under the lease (gofakes3, the backend here,
// ignores them), and never reach the backend.
func TestDeleteSizeAndTimeConditionsAreEnforced(t *testing.T) {
	var forwarded atomic.Int32
	f := newFixtureWith(t, fixtureOptions{backendHook: func(r *http.Request) {
		if r.Header.Get("X-Amz-If-Match-Size") != "" || r.Header.Get("X-Amz-If-Match-Last-Modified-Time") != "" {
			forwarded.Add(1)
		}
	}})
	ctx := context.Background()
	del := func(in *s3.DeleteObjectInput) error {
		in.Bucket, in.Key = aws.String(bucketName), aws.String("d")
		_, err := f.client.DeleteObject(ctx, in)
		return err
	}
	exists := func() bool {
		_, err := f.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucketName), Key: aws.String("d")})
		return err == nil
	}
	if _, err := f.put(t, "d", "four", nil); err != nil {
		t.Fatal(err)
	}
	head, err := f.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucketName), Key: aws.String("d")})
	if err != nil {
		t.Fatal(err)
	}

	if err := del(&s3.DeleteObjectInput{IfMatchSize: aws.Int64(5)}); errorCode(err) != "PreconditionFailed" {
		t.Fatalf("delete with the wrong size: %v, want PreconditionFailed", err)
	}
	if err := del(&s3.DeleteObjectInput{IfMatchLastModifiedTime: aws.Time(head.LastModified.Add(-time.Hour))}); errorCode(err) != "PreconditionFailed" {
		t.Fatalf("delete with the wrong time: %v, want PreconditionFailed", err)
	}
	if err := del(&s3.DeleteObjectInput{IfMatch: head.ETag, IfMatchSize: aws.Int64(5)}); errorCode(err) != "PreconditionFailed" {
		t.Fatalf("delete with the right ETag and the wrong size: %v, want PreconditionFailed", err)
	}
	if !exists() {
		t.Fatal("a delete whose condition failed removed the object")
	}
	if err := del(&s3.DeleteObjectInput{IfMatch: head.ETag, IfMatchSize: aws.Int64(4), IfMatchLastModifiedTime: head.LastModified}); err != nil {
		t.Fatalf("delete with every condition right: %v", err)
	}
	if exists() {
		t.Fatal("the delete whose conditions held left the object")
	}
	if err := del(&s3.DeleteObjectInput{IfMatchSize: aws.Int64(4)}); err != nil {
		t.Fatalf("size condition on a missing object: %v, want 204 as S3", err)
	}
	if n := forwarded.Load(); n != 0 {
		t.Fatalf("%d backend requests carried the delete conditions s3cond enforces", n)
	}
}

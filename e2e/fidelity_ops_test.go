package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3cond/s3cond/internal/testkit"
)

// DeleteObjects' per-key <Size> and <LastModifiedTime> hold like
// DeleteObject's x-amz-if-match-size / -last-modified-time: an entry whose
// condition fails is answered PreconditionFailed and its object kept, the
// others are deleted, and an entry on a missing object counts as deleted.
// Through s3cond they are enforced under each entry's lease. versitygw
// v1.8.0 itself refuses such a DeleteObjects (400 InvalidRequest), so this
// describes s3cond's behaviour only.
func TestFidelityDeleteObjectsSizeAndTime(t *testing.T) {
	e := NewEnv(t)
	e.RequireProxy(t)
	client := e.Client(t, e.RW)
	const bucket = "fidelity-multi-delete"
	CreateBucket(t, client, bucket)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	modified := map[string]time.Time{}
	for _, key := range []string{"size-wrong", "size-right", "time-wrong", "both-right"} {
		putBytes(t, ctx, client, bucket, key, []byte("four"))
		head, err := client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		modified[key] = aws.ToTime(head.LastModified)
	}
	out, err := client.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucket), Delete: &types.Delete{Objects: []types.ObjectIdentifier{
		{Key: aws.String("size-wrong"), Size: aws.Int64(5)},
		{Key: aws.String("size-right"), Size: aws.Int64(4)},
		{Key: aws.String("time-wrong"), LastModifiedTime: aws.Time(modified["time-wrong"].Add(-time.Hour))},
		{Key: aws.String("both-right"), Size: aws.Int64(4), LastModifiedTime: aws.Time(modified["both-right"])},
		{Key: aws.String("missing"), Size: aws.Int64(4)},
	}}})
	if err != nil {
		t.Fatalf("DeleteObjects: %v", err)
	}
	failed, deleted := testkit.DeleteOutcome(out)
	if len(failed) != 2 || failed["size-wrong"] != "PreconditionFailed" || failed["time-wrong"] != "PreconditionFailed" {
		t.Errorf("errors %v, want PreconditionFailed for size-wrong and time-wrong", failed)
	}
	if want := []string{"both-right", "missing", "size-right"}; !slices.Equal(deleted, want) {
		t.Errorf("deleted %v, want %v", deleted, want)
	}
	for _, key := range []string{"size-wrong", "time-wrong"} {
		if got := getBytes(t, ctx, client, bucket, key); string(got) != "four" {
			t.Errorf("%s after a refused delete: %q", key, got)
		}
	}
	requireMissing(t, ctx, client, bucket, "size-right")
	requireMissing(t, ctx, client, bucket, "both-right")
}

// With backend.checksums: verify-only (the harness's default), s3cond drops
// the client's x-amz-checksum-* after verifying it. The current Go SDK
// sends PutBucketCors with a CRC32 checksum and no Content-MD5, and
// versitygw refuses a CORS body without an integrity header: s3cond gives
// such small configuration bodies a Content-MD5 of its own.
func TestFidelityBucketConfigurationWithVerifyOnlyChecksums(t *testing.T) {
	e := NewEnv(t)
	client := e.Client(t, e.RW)
	const bucket = "fidelity-cors"
	CreateBucket(t, client, bucket)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	_, err := client.PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: aws.String(bucket), CORSConfiguration: &types.CORSConfiguration{
		CORSRules: []types.CORSRule{{AllowedMethods: []string{"GET", "PUT"}, AllowedOrigins: []string{"https://app.example"}}},
	}})
	if err != nil {
		t.Fatalf("PutBucketCors: %v", err)
	}
	got, err := client.GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatalf("GetBucketCors: %v", err)
	}
	if len(got.CORSRules) != 1 || !slices.Equal(got.CORSRules[0].AllowedOrigins, []string{"https://app.example"}) {
		t.Fatalf("CORS rules read back: %+v", got.CORSRules)
	}
}

package e2e

import (
	"bytes"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3cond/s3cond/internal/testservers"
)

// The development key s3cond's embedded defaults accept.
var devKey = Credentials{AccessKey: "S3CONDDEVKEY", Secret: "s3cond-dev-secret"}

// TestEmbeddedDefaults runs `s3cond` with no arguments (embedded store,
// embedded leases, development key) and checks the basic operations work.
func TestEmbeddedDefaults(t *testing.T) {
	if TargetMode() == ModeDirect {
		t.Skip("checks s3cond's embedded defaults; S3COND_E2E_TARGET=direct runs clients against versitygw")
	}
	proxy := testservers.StartS3condDefaults(t)
	c := NewS3Client(proxy.Endpoint, devKey, nil)
	runSmoke(t, c, "smoke")
}

// TestSmokeThroughTarget is the same smoke suite against the versitygw
// environment, so a failure of TestEmbeddedDefaults can be told apart from a
// broken smoke suite.
func TestSmokeThroughTarget(t *testing.T) {
	e := NewEnv(t)
	runSmoke(t, e.Client(t, e.RW), "smoke")
}

// runSmoke: put, get, list, delete, and a two-part multipart upload whose
// ETag a compare-and-swap then uses.
func runSmoke(t *testing.T, c *s3.Client, bucket string) {
	t.Helper()
	ctx := t.Context()
	CreateBucket(t, c, bucket)
	body := PatternBytes(3, 100_000)
	putBytes(t, ctx, c, bucket, "a", body)
	putBytes(t, ctx, c, bucket, "dir/b", []byte("b"))
	if got := getBytes(t, ctx, c, bucket, "a"); !bytes.Equal(got, body) {
		t.Fatalf("get a: %d bytes differ from the %d put", len(got), len(body))
	}
	list, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if keys := objectKeys(list.Contents); !slices.Equal(keys, []string{"a", "dir/b"}) {
		t.Fatalf("list: %v", keys)
	}

	created, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String("mpu")})
	if err != nil {
		t.Fatalf("create multipart upload: %v", err)
	}
	part1, part2 := PatternBytes(4, partSize), PatternBytes(5, 1000)
	var parts []types.CompletedPart
	for i, p := range [][]byte{part1, part2} {
		out, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String("mpu"), UploadId: created.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(p)})
		if err != nil {
			t.Fatalf("upload part %d: %v", i+1, err)
		}
		parts = append(parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(int32(i + 1))})
	}
	completed, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String("mpu"),
		UploadId: created.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	if err != nil {
		t.Fatalf("complete multipart upload: %v", err)
	}
	if got := getBytes(t, ctx, c, bucket, "mpu"); !bytes.Equal(got, slices.Concat(part1, part2)) {
		t.Fatalf("multipart object: %d bytes differ", len(got))
	}
	// The ETag the completion returned is the object's: HEAD reports it and
	// a compare-and-swap with it succeeds.
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("mpu")})
	if err != nil {
		t.Fatalf("head multipart object: %v", err)
	}
	if aws.ToString(head.ETag) != aws.ToString(completed.ETag) {
		t.Fatalf("HEAD ETag %s, the completion returned %s", aws.ToString(head.ETag), aws.ToString(completed.ETag))
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("mpu"),
		Body: bytes.NewReader([]byte("swapped")), IfMatch: completed.ETag}); err != nil {
		t.Fatalf("put If-Match the completion's ETag: %v", err)
	}

	for _, key := range []string{"a", "dir/b", "mpu"} {
		if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}); err != nil {
			t.Fatalf("delete %s: %v", key, err)
		}
		requireMissing(t, ctx, c, bucket, key)
	}
	if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("delete bucket: %v", err)
	}
}

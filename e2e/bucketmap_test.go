package e2e

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// With backend.buckets mapping a client bucket to another store bucket,
// every answer that names the bucket names the client's: listings, upload
// listings, CreateMultipartUpload and CompleteMultipartUpload. The store
// holds the object under its own bucket name.
func TestMappedBucketIsNamedAsTheClientNamesIt(t *testing.T) {
	e := NewEnv(t, WithConfig(func(c *Config) {
		c.Backend.Buckets = map[string]string{"client-photos": "store-photos"}
	}))
	e.RequireProxy(t)
	ctx := context.Background()
	c := e.Client(t, e.RW)
	CreateBucket(t, c, "client-photos")
	bucket := aws.String("client-photos")
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: bucket, Key: aws.String("store-photos/cat.jpg")}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.BackendClient().HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("store-photos"),
		Key: aws.String("store-photos/cat.jpg")}); err != nil {
		t.Fatalf("the store does not hold the object under its bucket name: %v", err)
	}

	list, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: bucket})
	if err != nil || aws.ToString(list.Name) != "client-photos" || len(list.Contents) != 1 ||
		aws.ToString(list.Contents[0].Key) != "store-photos/cat.jpg" {
		t.Fatalf("ListObjectsV2: %v; name %q, contents %+v", err, aws.ToString(list.Name), list.Contents)
	}
	v1, err := c.ListObjects(ctx, &s3.ListObjectsInput{Bucket: bucket})
	if err != nil || aws.ToString(v1.Name) != "client-photos" {
		t.Fatalf("ListObjects: %v; name %q", err, aws.ToString(v1.Name))
	}

	created, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: bucket, Key: aws.String("big")})
	if err != nil || aws.ToString(created.Bucket) != "client-photos" {
		t.Fatalf("CreateMultipartUpload: %v; bucket %q", err, aws.ToString(created.Bucket))
	}
	uploads, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: bucket})
	if err != nil || aws.ToString(uploads.Bucket) != "client-photos" || len(uploads.Uploads) != 1 {
		t.Fatalf("ListMultipartUploads: %v; bucket %q, uploads %d", err, aws.ToString(uploads.Bucket), len(uploads.Uploads))
	}
	part, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: bucket, Key: aws.String("big"), UploadId: created.UploadId,
		PartNumber: aws.Int32(1)})
	if err != nil {
		t.Fatal(err)
	}
	parts, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: bucket, Key: aws.String("big"), UploadId: created.UploadId})
	if err != nil || aws.ToString(parts.Bucket) != "client-photos" {
		t.Fatalf("ListParts: %v; bucket %q", err, aws.ToString(parts.Bucket))
	}
	done, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: bucket, Key: aws.String("big"),
		UploadId: created.UploadId, MultipartUpload: &types.CompletedMultipartUpload{
			Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: part.ETag}}}})
	if err != nil || aws.ToString(done.Bucket) != "client-photos" {
		t.Fatalf("CompleteMultipartUpload: %v; bucket %q", err, aws.ToString(done.Bucket))
	}
}

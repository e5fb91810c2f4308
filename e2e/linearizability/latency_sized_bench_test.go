package linearizability

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// copyCreate is a conditional CopyObject (If-None-Match: *) of a small
// source onto a fresh key: its lease is sized by a HEAD of the source
// (proxy/leasedwrite/size.go), one store request more than before.
func (f *floorBench) copyCreate(b *testing.B) time.Duration {
	src := f.key("copy-src")
	f.prepare(b, src)
	start := time.Now()
	_, err := f.client.CopyObject(context.Background(), &s3.CopyObjectInput{Bucket: aws.String(f.c.Bucket), Key: aws.String(f.key("copy")),
		CopySource: aws.String(f.c.Bucket + "/" + src), IfNoneMatch: aws.String("*")})
	took := time.Since(start)
	if err != nil {
		b.Fatal(err)
	}
	return took
}

// completeCreate is a conditional CompleteMultipartUpload (If-None-Match:
// *) of one small part onto a fresh key: its lease is sized by ListParts,
// one store request more than before.
func (f *floorBench) completeCreate(b *testing.B) time.Duration {
	ctx := context.Background()
	key := aws.String(f.key("complete"))
	bucket := aws.String(f.c.Bucket)
	up, err := f.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: bucket, Key: key})
	if err != nil {
		b.Fatal(err)
	}
	part, err := f.client.UploadPart(ctx, &s3.UploadPartInput{Bucket: bucket, Key: key, UploadId: up.UploadId,
		PartNumber: aws.Int32(1), Body: strings.NewReader("part")})
	if err != nil {
		b.Fatal(err)
	}
	f.prepared.Add(2)
	start := time.Now()
	_, err = f.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: bucket, Key: key, UploadId: up.UploadId,
		IfNoneMatch:     aws.String("*"),
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: part.ETag}}}})
	took := time.Since(start)
	if err != nil {
		b.Fatal(err)
	}
	return took
}

package embedded

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// `aws s3 cp s3://b/big s3://b/copy` copies a large object part by part
// with UploadPartCopy: a whole source and a range of it.
func TestUploadPartCopyBuildsTheObjectFromItsSource(t *testing.T) {
	ctx, _, c := startStoreWithClient(t)
	bucket := devBucket

	source := bytes.Repeat([]byte("0123456789"), 600_000) // 6 MB
	small := []byte("a small second source")
	putObject(t, ctx, c, "dir/source object", source)
	putObject(t, ctx, c, "small", small)
	created, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: bucket, Key: aws.String("copy")})
	if err != nil {
		t.Fatal(err)
	}
	first, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: bucket, Key: aws.String("copy"), UploadId: created.UploadId,
		PartNumber: aws.Int32(1), CopySource: aws.String("dev-bucket/dir%2Fsource%20object"), CopySourceRange: aws.String("bytes=0-5242879")})
	if err != nil {
		t.Fatalf("copy part 1 (a range): %v", err)
	}
	second, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: bucket, Key: aws.String("copy"), UploadId: created.UploadId,
		PartNumber: aws.Int32(2), CopySource: aws.String("/dev-bucket/small")})
	if err != nil {
		t.Fatalf("copy part 2 (a whole object): %v", err)
	}
	for i, part := range []*s3.UploadPartCopyOutput{first, second} {
		if part.CopyPartResult == nil || aws.ToString(part.CopyPartResult.ETag) == "" || part.CopyPartResult.LastModified == nil {
			t.Fatalf("part %d: no CopyPartResult with an ETag and a time: %+v", i+1, part.CopyPartResult)
		}
	}
	if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: bucket, Key: aws.String("copy"),
		UploadId: created.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{
			{PartNumber: aws.Int32(1), ETag: first.CopyPartResult.ETag},
			{PartNumber: aws.Int32(2), ETag: second.CopyPartResult.ETag},
		}}}); err != nil {
		t.Fatalf("complete: %v", err)
	}
	got, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: bucket, Key: aws.String("copy")})
	if err != nil {
		t.Fatal(err)
	}
	defer got.Body.Close()
	data, err := io.ReadAll(got.Body)
	if err != nil {
		t.Fatal(err)
	}
	if want := append(append([]byte(nil), source[:5242880]...), small...); !bytes.Equal(data, want) {
		t.Fatalf("copied object: %d bytes, want %d from the two sources", len(data), len(want))
	}
}

func TestUploadPartCopyErrors(t *testing.T) {
	ctx, _, c := startStoreWithClient(t)
	bucket := devBucket
	putObject(t, ctx, c, "source", []byte("ten bytes!"))
	created, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: bucket, Key: aws.String("copy")})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, source, byteRange, code string
	}{
		{"missing source", "dev-bucket/nothing", "", "NoSuchKey"},
		{"range past the end", "dev-bucket/source", "bytes=5-10", "InvalidRange"},
		{"malformed range", "dev-bucket/source", "bytes=5-", "InvalidArgument"},
		{"no key", "dev-bucket", "", "InvalidArgument"},
		{"a version", "dev-bucket/source?versionId=3", "", "NotImplemented"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &s3.UploadPartCopyInput{Bucket: bucket, Key: aws.String("copy"), UploadId: created.UploadId,
				PartNumber: aws.Int32(1), CopySource: aws.String(tc.source)}
			if tc.byteRange != "" {
				in.CopySourceRange = aws.String(tc.byteRange)
			}
			_, err := c.UploadPartCopy(ctx, in)
			var apiErr smithy.APIError
			if !errors.As(err, &apiErr) || apiErr.ErrorCode() != tc.code {
				t.Fatalf("err = %v, want %s", err, tc.code)
			}
		})
	}
}

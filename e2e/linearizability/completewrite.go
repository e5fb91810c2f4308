package linearizability

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// complete writes a new value to key by a multipart upload of one part,
// completed with If-None-Match: * (expect empty) or If-Match: etag, and
// records it as OpComplete. The upload's set-up is not part of the
// operation: only its completion writes the key. A set-up that fails is
// no operation at all.
func (c *workloadClient) complete(key, expect, etag string) {
	value := c.nextValue()
	ctx, cancel := c.opContext()
	defer cancel()
	bucket := aws.String(c.w.Cluster.Bucket)
	created, err := c.s3.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: bucket, Key: aws.String(key)})
	if err != nil {
		return
	}
	part, err := c.s3.UploadPart(ctx, &s3.UploadPartInput{Bucket: bucket, Key: aws.String(key), UploadId: created.UploadId,
		PartNumber: aws.Int32(1), Body: bytesReader(Body(value, c.w.BodySize))})
	if err != nil {
		return
	}
	in := Input{Kind: OpComplete, Key: key, Value: value, Expect: expect}
	input := &s3.CompleteMultipartUploadInput{Bucket: bucket, Key: aws.String(key), UploadId: created.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: part.ETag, PartNumber: aws.Int32(1)}}}}
	if expect == "" {
		input.IfNoneMatch = aws.String("*")
	} else {
		input.IfMatch = aws.String(etag)
	}
	pending := c.rec.Invoke(c.id, in)
	_, err = c.s3.CompleteMultipartUpload(ctx, input)
	c.finish(pending, in, err)
}

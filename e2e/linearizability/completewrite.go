package linearizability

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"

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
		PartNumber: aws.Int32(1), Body: bytesReader(multipartBody(value, c.w.BodySize))})
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

// multipartMark, right after a body's '|', says a completion wrote it
// (never in Body's lower-case padding): a reader then expects the
// store's ETag of a one-part upload, not the body's MD5 (bodyETag).
const multipartMark = 'M'

// multipartBody is Body(value, size) marked as written by a completion.
func multipartBody(value string, size int) []byte {
	b := Body(value, size)
	if i := len(value) + 1; i < len(b) {
		b[i] = multipartMark
		return b
	}
	return append(b, multipartMark)
}

// isMultipartBody reports whether body was written by multipartBody.
func isMultipartBody(body []byte) bool {
	i := bytes.IndexByte(body, '|')
	return i >= 0 && i+1 < len(body) && body[i+1] == multipartMark
}

// onePartUploadETag is S3's ETag of an object completed from one part
// holding body: the MD5 of the part's MD5, then "-1".
func onePartUploadETag(body []byte) string {
	part := md5.Sum(body)
	sum := md5.Sum(part[:])
	return `"` + hex.EncodeToString(sum[:]) + `-1"`
}

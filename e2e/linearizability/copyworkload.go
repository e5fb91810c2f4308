package linearizability

import (
	"bytes"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// copies reports whether this create or CAS is sent as a CopyObject.
func (c *workloadClient) copies() bool {
	return c.w.CopyOneIn > 0 && c.rnd.IntN(c.w.CopyOneIn) == 0
}

// copyWrite writes in.Value onto in.Key by a conditional CopyObject
// (If-None-Match: * when in.Expect is empty, else If-Match: etag) of a
// source holding that value, written first under a key of its own that no
// client reads: only the copy is in the history.
func (c *workloadClient) copyWrite(in Input, etag string) {
	src := "copysrc/" + in.Value
	ctx, cancel := c.opContext()
	defer cancel()
	bucket := aws.String(c.w.Cluster.Bucket)
	if _, err := c.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: bucket, Key: aws.String(src),
		Body: bytes.NewReader(Body(in.Value, c.w.BodySize))}); err != nil {
		return // no copy was sent
	}
	pending := c.rec.Invoke(c.id, in)
	input := &s3.CopyObjectInput{Bucket: bucket, Key: aws.String(in.Key), CopySource: aws.String(c.w.Cluster.Bucket + "/" + src)}
	if in.Expect == "" {
		input.IfNoneMatch = aws.String("*")
	} else {
		input.IfMatch = aws.String(etag)
	}
	_, err := c.s3.CopyObject(ctx, input)
	c.finish(pending, in, err)
}

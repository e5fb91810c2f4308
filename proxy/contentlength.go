package proxy

import (
	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/s3err"
)

// requireLength answers 411 MissingContentLength, as S3 does, for an upload
// whose length is not known up front: a PutObject or UploadPart sent with
// Transfer-Encoding: chunked and neither Content-Length nor (for
// aws-chunked) x-amz-decoded-content-length. It runs before any lease is
// sought or byte forwarded: such a body cannot be gated at its final byte
// (SPEC §4), and the store may refuse it only after s3cond held the key.
func requireLength(c *call) error {
	if (c.op == operation.PutObject || c.op == operation.UploadPart) && c.auth.Body.Length() < 0 {
		return s3err.New(s3err.MissingContentLength)
	}
	return nil
}

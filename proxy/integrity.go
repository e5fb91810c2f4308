package proxy

import (
	"bytes"
	"github.com/s3cond/s3cond/internal/operation"
	"net/http"
)

// maxConfigurationBody bounds the bodies withIntegrityHeader reads whole:
// S3's configuration documents are far smaller (a CORS configuration at
// most 64 KB, a lifecycle of 1000 rules a few hundred), and DeleteObjects
// is read whole to the same bound.
const maxConfigurationBody = maxDeleteBody

// withIntegrityHeader keeps a small request body's integrity header when
// backend.checksums: verify-only drops the client's x-amz-checksum-*.
// Stores require one (Content-MD5 or a checksum) on bucket configuration
// PUTs and the like (PutBucketCors, PutBucketLifecycleConfiguration,
// PutObjectLockConfiguration, ...), and current SDKs send a checksum
// rather than Content-MD5; without this the store answered 400. The body
// (at most maxConfigurationBody, an XML document) is read and verified
// whole, then sent with a Content-MD5 of its verified bytes, which every S3
// store accepts. Uploads are left alone: they stream, and no store
// requires an integrity header on them; CompleteMultipartUpload's checksum
// describes the object, not its body.
func (p *Proxy) withIntegrityHeader(c *call, spec forwardSpec) (forwardSpec, error) {
	switch {
	case c.backend.ForwardChecksums, c.auth == nil, spec.header != nil,
		c.op == operation.PutObject, c.op == operation.UploadPart, c.op == operation.CompleteMultipartUpload,
		spec.length <= 0, spec.length > maxConfigurationBody,
		spec.body != c.auth.Body, checksumAlgorithmOf(c.auth.Body) == "":
		return spec, nil
	}
	if _, hasMD5 := c.r.Header["Content-Md5"]; hasMD5 {
		return spec, nil // forwarded as the client sent it, and verified
	}
	body, err := readWhole(spec.body, spec.length)
	if err != nil {
		return spec, err
	}
	spec.body = bytes.NewReader(body)
	spec.header = http.Header{"Content-Md5": {contentMD5(body)}}
	return spec, nil
}

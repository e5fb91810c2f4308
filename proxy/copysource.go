package proxy

import (
	"net/url"
	"strings"

	"github.com/s3cond/s3cond/s3err"
)

// copySourceHeader is where CopyObject and UploadPartCopy name their source;
// S3's errors about it name the header in lower case.
const copySourceHeader = "x-amz-copy-source"

// authoriseCopySource checks the source a CopyObject or UploadPartCopy
// reads: a header that parses, a bucket the key may read on the same
// backend, and a key the backend's key policy lets through.
func (p *Proxy) authoriseCopySource(c *call) error {
	srcBucket, srcKey, err := parseCopySource(c.r.Header.Get("X-Amz-Copy-Source"))
	if err != nil {
		return err
	}
	if !p.access.Allowed(c.auth.AccessKeyID, srcBucket, false) {
		return s3err.New(s3err.AccessDenied)
	}
	if p.backendFor(srcBucket) != c.backend {
		return s3err.Newf(s3err.NotImplemented, "The copy source bucket is served by another backend: a copy runs inside one store.")
	}
	if err := c.backend.KeyPolicy.Check(srcKey); err != nil {
		// S3's words for a source key it refuses; the key policy's reason
		// is the same as for a URL key (security.md).
		return invalidCopySource("Invalid copy source object key", srcKey)
	}
	return nil
}

// parseCopySource reads the bucket and key of an X-Amz-Copy-Source header
// ("[/]bucket/key[?versionId=...]", each part URL-escaped), with S3's
// answers for one it cannot read: 400 InvalidArgument "Invalid copy source
// encoding" for a broken percent-escape anywhere in it, "... bucket name"
// when no bucket is named, "... object key" when no key is ("bucket" alone
// names a bucket and no key, as S3 reads it).
func parseCopySource(src string) (bucket, key string, err error) {
	if _, err := url.PathUnescape(src); err != nil {
		return "", "", invalidCopySource("Invalid copy source encoding", src)
	}
	path := strings.TrimPrefix(src, "/")
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	rawBucket, rawKey, _ := strings.Cut(path, "/")
	if rawBucket == "" {
		return "", "", invalidCopySource("Invalid copy source bucket name", src)
	}
	// Both unescape: the whole value did.
	bucket, _ = url.PathUnescape(rawBucket)
	key, _ = url.PathUnescape(rawKey)
	if key == "" {
		return "", "", invalidCopySource("Invalid copy source object key", key)
	}
	return bucket, key, nil
}

func invalidCopySource(message, value string) *s3err.Error {
	return s3err.Newf(s3err.InvalidArgument, "%s", message).
		With("ArgumentName", copySourceHeader).With("ArgumentValue", value)
}

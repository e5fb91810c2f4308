package proxy

import (
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/s3err"
)

// copySourceHeader is where CopyObject and UploadPartCopy name their source;
// S3's errors about it name the header in lower case.
const copySourceHeader = "x-amz-copy-source"

// copySource is what an X-Amz-Copy-Source header names, as S3 reads it.
type copySource struct {
	bucket, key string
	// versionID is "" for the current version.
	versionID string
}

// authoriseCopySource checks the source a CopyObject or UploadPartCopy
// reads: a header that parses, a bucket the key may read on the same
// backend, and a key the backend's key policy lets through. The parsed
// source is kept: the backend's header is rebuilt from it (outboundHeader
// never relays the client's), so the store reads the key checked here.
func (p *Proxy) authoriseCopySource(c *call) error {
	values := c.r.Header.Values("X-Amz-Copy-Source")
	if len(values) != 1 {
		return invalidCopySource("Invalid copy source: the header is given more than once", "")
	}
	src, err := parseCopySource(values[0])
	if err != nil {
		return err
	}
	if !p.access.Allowed(c.auth.AccessKeyID, src.bucket, false) {
		return s3err.New(s3err.AccessDenied)
	}
	if p.backendFor(src.bucket) != c.backend {
		return s3err.Newf(s3err.NotImplemented, "The copy source bucket is served by another backend: a copy runs inside one store.")
	}
	if err := c.backend.KeyPolicy.Check(src.key); err != nil {
		// S3's words for a source key it refuses; the key policy's reason
		// is the same as for a URL key (security.md).
		return invalidCopySource("Invalid copy source object key", src.key)
	}
	c.copySource = &src
	return nil
}

// parseCopySource reads an X-Amz-Copy-Source header as S3 does: the whole
// value URL-decoded, then split at "?versionId=" into "[/]bucket/key" and
// the version. A value S3 and a store could read two ways is refused: any
// other '?' (versitygw decodes the whole value and cuts only at
// "?versionId=", so "alpha/a?/../b" is its key "b", where a reader cutting
// at the first '?' saw "a"), a version that is no version ID (nameToken),
// a key S3 would not take. S3's answers for one it cannot read: 400
// InvalidArgument "Invalid copy source encoding" for a broken
// percent-escape anywhere in it, "... bucket name" when no bucket is named,
// "... object key" when no key is ("bucket" alone names a bucket and no
// key, as S3 reads it).
func parseCopySource(raw string) (copySource, error) {
	decoded, err := url.PathUnescape(raw)
	if err != nil {
		return copySource{}, invalidCopySource("Invalid copy source encoding", raw)
	}
	path, versionID, versioned := strings.Cut(decoded, "?versionId=")
	if strings.IndexByte(path, '?') >= 0 {
		return copySource{}, invalidCopySource("Invalid copy source: a '?' other than ?versionId= is ambiguous", raw)
	}
	if versioned && !nameToken(versionID, KeyPolicyStrict) {
		return copySource{}, invalidCopySource("Invalid copy source version id", raw)
	}
	bucket, key, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	switch {
	case bucket == "":
		return copySource{}, invalidCopySource("Invalid copy source bucket name", raw)
	case key == "":
		return copySource{}, invalidCopySource("Invalid copy source object key", key)
	case !operation.ValidBucketName(bucket):
		return copySource{}, invalidCopySource("Invalid copy source bucket name", raw)
	case len(key) > operation.MaxKeyBytes || !utf8.ValidString(key):
		return copySource{}, invalidCopySource("Invalid copy source object key", key)
	}
	return copySource{bucket: bucket, key: key, versionID: versionID}, nil
}

// header is the backend's X-Amz-Copy-Source for s: the backend's bucket
// name and the key, every byte but the unreserved ones and the key's '/'
// percent-encoded (a store that decodes '+' as a space reads the same
// key), and the checked version.
func (s copySource) header(b *Backend) string {
	segments := strings.Split(s.key, "/")
	for i, seg := range segments {
		segments[i] = strictEscape(seg)
	}
	h := "/" + strictEscape(b.BackendBucket(s.bucket)) + "/" + strings.Join(segments, "/")
	if s.versionID != "" {
		h += "?versionId=" + strictEscape(s.versionID)
	}
	return h
}

func invalidCopySource(message, value string) *s3err.Error {
	return s3err.Newf(s3err.InvalidArgument, "%s", message).
		With("ArgumentName", copySourceHeader).With("ArgumentValue", value)
}

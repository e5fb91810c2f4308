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

// parseCopySource reads an X-Amz-Copy-Source header as S3 does: the
// version, if any, follows the last unencoded '?' as "versionId=<id>"; what
// precedes it is "[/]bucket/key", URL-encoded, so an encoded '?' (%3F) is
// part of the key (s3-tests' test_multipart_copy_special_names copies such
// keys). An unencoded '?' before the last one is the key's too. S3's
// answers for one it cannot read: 400 InvalidArgument "Invalid copy source
// encoding" for a broken percent-escape, "... bucket name" when no bucket
// is named, "... object key" when no key is ("bucket" alone names a bucket
// and no key, as S3 reads it), "... version id" for a version that is no
// version ID (nameToken). One key S3 takes is refused: one whose text holds
// "?versionId=", since a store that decodes the whole header before
// cutting there (versitygw) would read another key and version than the
// one checked here, whatever encoding s3cond sends.
func parseCopySource(raw string) (copySource, error) {
	path, rawVersion, versioned := raw, "", false
	if q := strings.LastIndexByte(raw, '?'); q >= 0 {
		path = raw[:q]
		if rawVersion, versioned = strings.CutPrefix(raw[q+1:], "versionId="); !versioned {
			return copySource{}, invalidCopySource("Invalid copy source: only ?versionId= may follow the key", raw)
		}
	}
	decoded, errPath := url.PathUnescape(path)
	versionID, errVersion := url.PathUnescape(rawVersion)
	if errPath != nil || errVersion != nil {
		return copySource{}, invalidCopySource("Invalid copy source encoding", raw)
	}
	if versioned && !nameToken(versionID, KeyPolicyStrict) {
		return copySource{}, invalidCopySource("Invalid copy source version id", raw)
	}
	bucket, key, _ := strings.Cut(strings.TrimPrefix(decoded, "/"), "/")
	switch {
	case bucket == "":
		return copySource{}, invalidCopySource("Invalid copy source bucket name", raw)
	case key == "":
		return copySource{}, invalidCopySource("Invalid copy source object key", key)
	case !operation.ValidBucketName(bucket):
		return copySource{}, invalidCopySource("Invalid copy source bucket name", raw)
	case len(key) > operation.MaxKeyBytes || !utf8.ValidString(key):
		return copySource{}, invalidCopySource("Invalid copy source object key", key)
	case strings.Contains(key, "?versionId="):
		return copySource{}, invalidCopySource("Invalid copy source object key: a key holding ?versionId= is read as a version by stores that decode the header first", key)
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

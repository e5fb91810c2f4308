package precondition

import (
	"net/http"
	"time"
)

// Read precondition headers of GetObject and HeadObject.
const (
	HeaderIfModifiedSince   = "If-Modified-Since"
	HeaderIfUnmodifiedSince = "If-Unmodified-Since"
)

// ReadOutcome is what S3 answers a read whose preconditions were evaluated
// against the object's current ETag and Last-Modified.
type ReadOutcome struct {
	// Status is 0 (serve the object), 412 or 304.
	Status int
	// Header names the condition that decided a 412.
	Header string
}

// EvaluateRead applies S3's rules for GET/HEAD preconditions (RFC 9110
// §13.2.2, as S3 documents them) to an object with the given ETag and
// Last-Modified (an HTTP date; empty when unknown):
//   - If-Match that matches no ETag: 412. When If-Match is present (and
//     holds), If-Unmodified-Since is not evaluated.
//   - otherwise If-Unmodified-Since before Last-Modified: 412.
//   - If-None-Match that matches the ETag (or is *): 304. When If-None-Match
//     is present (and holds), If-Modified-Since is not evaluated.
//   - otherwise If-Modified-Since at or after Last-Modified: 304.
//
// A date that does not parse is ignored, as RFC 9110 asks; an ETag list
// that does not parse matches nothing, so If-Match fails closed.
func EvaluateRead(h http.Header, etag, lastModified string) ReadOutcome {
	return evaluate(readHeaders, h, etag, lastModified)
}

// conditionHeaders names the four headers of one kind of request.
type conditionHeaders struct{ ifMatch, ifNoneMatch, ifModifiedSince, ifUnmodifiedSince string }

var readHeaders = conditionHeaders{HeaderIfMatch, HeaderIfNoneMatch, HeaderIfModifiedSince, HeaderIfUnmodifiedSince}

func evaluate(names conditionHeaders, h http.Header, etag, lastModified string) ReadOutcome {
	modified, modifiedKnown := parseHTTPDate(lastModified)
	if v, ok := headerValue(h, names.ifMatch); ok {
		if !listMatches(v, etag) {
			return ReadOutcome{Status: http.StatusPreconditionFailed, Header: names.ifMatch}
		}
	} else if since, ok := parseHTTPDate(h.Get(names.ifUnmodifiedSince)); ok && modifiedKnown && modified.After(since) {
		return ReadOutcome{Status: http.StatusPreconditionFailed, Header: names.ifUnmodifiedSince}
	}
	if v, ok := headerValue(h, names.ifNoneMatch); ok {
		if listMatches(v, etag) {
			return ReadOutcome{Status: http.StatusNotModified, Header: names.ifNoneMatch}
		}
	} else if since, ok := parseHTTPDate(h.Get(names.ifModifiedSince)); ok && modifiedKnown && !modified.After(since) {
		return ReadOutcome{Status: http.StatusNotModified, Header: names.ifModifiedSince}
	}
	return ReadOutcome{}
}

// Copy-source condition headers of CopyObject and UploadPartCopy.
const (
	HeaderCopySourceIfMatch           = "X-Amz-Copy-Source-If-Match"
	HeaderCopySourceIfNoneMatch       = "X-Amz-Copy-Source-If-None-Match"
	HeaderCopySourceIfModifiedSince   = "X-Amz-Copy-Source-If-Modified-Since"
	HeaderCopySourceIfUnmodifiedSince = "X-Amz-Copy-Source-If-Unmodified-Since"
)

var copySourceHeaders = conditionHeaders{HeaderCopySourceIfMatch, HeaderCopySourceIfNoneMatch, HeaderCopySourceIfModifiedSince, HeaderCopySourceIfUnmodifiedSince}

// HasCopySourceConditions reports whether any x-amz-copy-source-if-* header is present.
func HasCopySourceConditions(h http.Header) bool {
	for _, name := range []string{HeaderCopySourceIfMatch, HeaderCopySourceIfNoneMatch, HeaderCopySourceIfModifiedSince, HeaderCopySourceIfUnmodifiedSince} {
		if _, ok := h[name]; ok {
			return true
		}
	}
	return false
}

// EvaluateCopySource applies the x-amz-copy-source-if-* headers to the
// source object with the given ETag and Last-Modified, with the precedence
// of EvaluateRead; where a read would get 304, a copy gets 412 (S3's
// answer). It returns the header that failed, or "" when the copy may go.
func EvaluateCopySource(h http.Header, etag, lastModified string) (failed string) {
	return evaluate(copySourceHeaders, h, etag, lastModified).Header
}

// listMatches reports whether an If-Match / If-None-Match value names the
// object with etag: "*" matches any object (a read that got an answer has one).
func listMatches(v, etag string) bool {
	tags, err := ParseETagList(v)
	if err != nil {
		return false
	}
	for _, tag := range tags {
		if tag == wildcard || ETagsEqual(tag, etag) {
			return true
		}
	}
	return false
}

// parseHTTPDate parses an HTTP date at S3's one-second resolution.
func parseHTTPDate(v string) (time.Time, bool) {
	if v == "" {
		return time.Time{}, false
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return time.Time{}, false
	}
	return t.Truncate(time.Second), true
}

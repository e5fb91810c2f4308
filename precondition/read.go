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
	modified, modifiedKnown := parseHTTPDate(lastModified)
	if v, ok := headerValue(h, HeaderIfMatch); ok {
		if !listMatches(v, etag) {
			return ReadOutcome{Status: http.StatusPreconditionFailed, Header: HeaderIfMatch}
		}
	} else if since, ok := parseHTTPDate(h.Get(HeaderIfUnmodifiedSince)); ok && modifiedKnown && modified.After(since) {
		return ReadOutcome{Status: http.StatusPreconditionFailed, Header: HeaderIfUnmodifiedSince}
	}
	if v, ok := headerValue(h, HeaderIfNoneMatch); ok {
		if listMatches(v, etag) {
			return ReadOutcome{Status: http.StatusNotModified}
		}
	} else if since, ok := parseHTTPDate(h.Get(HeaderIfModifiedSince)); ok && modifiedKnown && !modified.After(since) {
		return ReadOutcome{Status: http.StatusNotModified}
	}
	return ReadOutcome{}
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

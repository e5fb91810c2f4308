package precondition

import (
	"net/http"
	"strings"

	"github.com/s3cond/s3cond/s3err"
)

// RenameObject's source condition headers (x-amz-rename-source-if-*),
// judged as a copy's source conditions are: where a read would get 304,
// a rename gets 412.
const (
	HeaderRenameSourceIfMatch           = "X-Amz-Rename-Source-If-Match"
	HeaderRenameSourceIfNoneMatch       = "X-Amz-Rename-Source-If-None-Match"
	HeaderRenameSourceIfModifiedSince   = "X-Amz-Rename-Source-If-Modified-Since"
	HeaderRenameSourceIfUnmodifiedSince = "X-Amz-Rename-Source-If-Unmodified-Since"
)

var renameSourceHeaders = conditionHeaders{HeaderRenameSourceIfMatch, HeaderRenameSourceIfNoneMatch, HeaderRenameSourceIfModifiedSince, HeaderRenameSourceIfUnmodifiedSince}

// EvaluateRenameSource applies the x-amz-rename-source-if-* headers to the
// source object with the given ETag and Last-Modified. It returns the
// header that failed, lower case as S3's error names it, or "" when the
// rename may go.
func EvaluateRenameSource(h http.Header, etag, lastModified string) (failed string) {
	return strings.ToLower(evaluate(renameSourceHeaders, h, etag, lastModified).Header)
}

// EvaluateRenameDestination applies a RenameObject's destination
// conditions: If-Match / If-None-Match: * as a write's (c, from ParseWrite:
// S3's 404 for If-Match on a missing key, 412 otherwise), then
// If-Unmodified-Since and If-Modified-Since against an existing
// destination, with a read's precedence (a present If-Match decides
// alone; a date condition where a read would get 304 is 412). A date
// condition on a missing destination has nothing to compare and holds.
func EvaluateRenameDestination(c Conditions, h http.Header, s ObjectState) error {
	if err := c.Evaluate(s); err != nil {
		return err
	}
	if !s.Exists {
		return nil
	}
	lastModified := ""
	if !s.LastModified.IsZero() {
		lastModified = s.LastModified.UTC().Format(http.TimeFormat)
	}
	dates := http.Header{}
	for _, name := range []string{HeaderIfModifiedSince, HeaderIfUnmodifiedSince} {
		if v, ok := h[name]; ok {
			dates[name] = v
		}
	}
	if _, ok := h[HeaderIfMatch]; ok {
		dates.Del(HeaderIfUnmodifiedSince) // If-Match held, and decides
	}
	if failed := evaluate(readHeaders, dates, s.ETag, lastModified).Header; failed != "" {
		return s3err.Precondition(failed)
	}
	return nil
}

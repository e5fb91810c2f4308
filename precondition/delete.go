package precondition

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/s3cond/s3cond/s3err"
)

// DeleteObject's conditions besides If-Match. S3 documents them as: delete
// only if the object's size in bytes (x-amz-if-match-size) and its last
// modification time (x-amz-if-match-last-modified-time, an HTTP-date as the
// SDKs send it) match; otherwise 412 PreconditionFailed; when the object
// does not exist, 204 as for any delete. They may be combined with each
// other and with If-Match.
const (
	HeaderIfMatchSize             = "X-Amz-If-Match-Size"
	HeaderIfMatchLastModifiedTime = "X-Amz-If-Match-Last-Modified-Time"
)

// conditionIfMatchSize and conditionIfMatchLastModifiedTime name the header
// that failed in a 412 body, spelled as clients send it.
const (
	conditionIfMatchSize             = "x-amz-if-match-size"
	conditionIfMatchLastModifiedTime = "x-amz-if-match-last-modified-time"
)

// deleteConditions are a DeleteObject's size and time conditions; the zero
// value has none.
type deleteConditions struct {
	hasSize     bool
	size        int64
	hasModified bool
	modified    time.Time // whole seconds, as an HTTP-date carries it
}

func (d deleteConditions) active() bool { return d.hasSize || d.hasModified }

// parseDeleteConditions reads the two headers. A value that does not parse
// is 400 InvalidArgument: ignoring it would turn a conditional delete into
// an unconditional one.
func parseDeleteConditions(h http.Header) (deleteConditions, error) {
	var d deleteConditions
	if v, ok := singleValue(h, HeaderIfMatchSize); ok {
		size, err := strconv.ParseInt(v, 10, 64)
		if err != nil || size < 0 || strings.HasPrefix(v, "+") {
			return deleteConditions{}, invalidArgument(conditionIfMatchSize, v)
		}
		d.hasSize, d.size = true, size
	}
	if v, ok := singleValue(h, HeaderIfMatchLastModifiedTime); ok {
		t, err := parseTimestamp(v)
		if err != nil {
			return deleteConditions{}, invalidArgument(conditionIfMatchLastModifiedTime, v)
		}
		d.hasModified, d.modified = true, t
	}
	return d, nil
}

// parseTimestamp accepts the HTTP-date the AWS SDKs send for this header,
// and ISO 8601 (what S3 uses in XML) for hand-written requests.
func parseTimestamp(v string) (time.Time, error) {
	if t, err := http.ParseTime(v); err == nil {
		return t.Truncate(time.Second), nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, err
	}
	return t.Truncate(time.Second), nil
}

// evaluate checks the object the delete would remove. A missing object
// passes: S3 answers 204, as for an unconditional delete.
func (d deleteConditions) evaluate(s ObjectState) error {
	if !s.Exists {
		return nil
	}
	if d.hasSize && s.Size != d.size {
		return s3err.Precondition(conditionIfMatchSize)
	}
	// Last-Modified has whole seconds on the wire; compare at that
	// resolution, whatever the store keeps.
	if d.hasModified && (s.LastModified.IsZero() || !s.LastModified.Truncate(time.Second).Equal(d.modified)) {
		return s3err.Precondition(conditionIfMatchLastModifiedTime)
	}
	return nil
}

// header names the first condition present, for Conditions.Header.
func (d deleteConditions) header() string {
	switch {
	case d.hasSize:
		return conditionIfMatchSize
	case d.hasModified:
		return conditionIfMatchLastModifiedTime
	}
	return ""
}

func (d deleteConditions) String() string {
	var parts []string
	if d.hasSize {
		parts = append(parts, conditionIfMatchSize+": "+strconv.FormatInt(d.size, 10))
	}
	if d.hasModified {
		parts = append(parts, conditionIfMatchLastModifiedTime+": "+d.modified.UTC().Format(http.TimeFormat))
	}
	return strings.Join(parts, "; ")
}

// singleValue is a header's trimmed value; repeated lines are refused by
// the caller as not parsing (they join with a comma).
func singleValue(h http.Header, name string) (string, bool) {
	v, ok := headerValue(h, name)
	return strings.TrimSpace(v), ok
}

func invalidArgument(name, value string) *s3err.Error {
	return s3err.Newf(s3err.InvalidArgument, "Invalid %s header value", name).
		With("ArgumentName", name).With("ArgumentValue", value)
}

// ForDeleteEntry builds the condition of one <Object> entry of
// DeleteObjects: its <ETag> (as ForETag), and its <Size> and
// <LastModifiedTime>, the per-key forms of x-amz-if-match-size and
// x-amz-if-match-last-modified-time (an ISO 8601 timestamp in XML), each
// "" when absent. A size or time that does not parse is 400
// InvalidArgument, as for the headers.
func ForDeleteEntry(etag, size, lastModified string) (Conditions, error) {
	h := http.Header{}
	if size != "" {
		h.Set(HeaderIfMatchSize, size)
	}
	if lastModified != "" {
		h.Set(HeaderIfMatchLastModifiedTime, lastModified)
	}
	deleteIf, err := parseDeleteConditions(h)
	if err != nil {
		return Conditions{}, err
	}
	c := ForETag(etag)
	c.deleteIf = deleteIf
	return c, nil
}

// Package precondition parses and evaluates the conditional-write headers
// (If-Match, If-None-Match) that s3cond adds on top of a backend which may
// not support them. It does no I/O: the caller supplies what a HEAD on the
// backend found, and gets back nil or the *s3err.Error that Amazon S3 answers.
package precondition

import (
	"net/http"
	"strings"

	"github.com/s3cond/s3cond/internal/s3err"
)

// Header names, also used as the <Condition> of a 412 body.
const (
	HeaderIfMatch     = "If-Match"
	HeaderIfNoneMatch = "If-None-Match"
)

type kind uint8

const (
	kindNone     kind = iota // unconditional
	kindCreate               // If-None-Match: *
	kindMatchAny             // If-Match: *
	kindMatchTag             // If-Match: one or more entity tags
)

// Conditions are the If-Match / If-None-Match headers of a write (PutObject,
// CopyObject destination, CompleteMultipartUpload) or of a DeleteObject. The
// zero value is "no condition".
type Conditions struct {
	kind kind
	// etags holds the acceptable ETags in CanonicalETag form (kindMatchTag only).
	etags []string
}

// ObjectState is what a HEAD on the backend found.
type ObjectState struct {
	Exists bool
	ETag   string
}

// ParseWrite reads If-Match / If-None-Match for PutObject, CopyObject and
// CompleteMultipartUpload. As Amazon S3 does, it answers 501 NotImplemented
// when both headers are present or If-None-Match is anything but "*".
// A malformed If-Match (empty, unbalanced quotes, "*" mixed with tags) is
// 400 InvalidArgument: S3 does not document this case, and refusing the
// request is the choice that can never turn a conditional write into an
// unconditional one.
func ParseWrite(h http.Header) (Conditions, error) {
	ifMatch, hasMatch := headerValue(h, HeaderIfMatch)
	ifNoneMatch, hasNoneMatch := headerValue(h, HeaderIfNoneMatch)
	switch {
	case hasMatch && hasNoneMatch:
		// S3 supports each header alone only.
		return Conditions{}, notImplemented(HeaderIfNoneMatch)
	case hasNoneMatch:
		if strings.TrimSpace(ifNoneMatch) != wildcard {
			return Conditions{}, notImplemented(HeaderIfNoneMatch)
		}
		return Conditions{kind: kindCreate}, nil
	case hasMatch:
		return parseIfMatch(ifMatch)
	default:
		return Conditions{}, nil
	}
}

// ParseDelete reads If-Match for DeleteObject. S3 has no If-None-Match on a
// delete and answers 501 NotImplemented for it.
func ParseDelete(h http.Header) (Conditions, error) {
	if _, ok := headerValue(h, HeaderIfNoneMatch); ok {
		return Conditions{}, notImplemented(HeaderIfNoneMatch)
	}
	ifMatch, ok := headerValue(h, HeaderIfMatch)
	if !ok {
		return Conditions{}, nil
	}
	return parseIfMatch(ifMatch)
}

// ForETag builds the condition of one <Object><ETag> entry of DeleteObjects:
// "" means none, "*" means the object must exist, anything else is one ETag.
// It never fails: a value that is not valid header syntax is taken as one
// opaque ETag, which simply will not match (S3 reports that key as 412).
func ForETag(etag string) Conditions {
	switch strings.TrimSpace(etag) {
	case "":
		return Conditions{}
	case wildcard:
		return Conditions{kind: kindMatchAny}
	}
	if tags, err := ParseETagList(etag); err == nil && len(tags) == 1 {
		return Conditions{kind: kindMatchTag, etags: tags}
	}
	return Conditions{kind: kindMatchTag, etags: []string{CanonicalETag(etag)}}
}

// Active reports whether any condition is present.
func (c Conditions) Active() bool { return c.kind != kindNone }

// IsCreate reports whether this is If-None-Match: *.
func (c Conditions) IsCreate() bool { return c.kind == kindCreate }

// Header returns the header a failure is reported under (<Condition> of the
// 412 body), or "" when there is no condition.
func (c Conditions) Header() string {
	switch c.kind {
	case kindCreate:
		return HeaderIfNoneMatch
	case kindMatchAny, kindMatchTag:
		return HeaderIfMatch
	default:
		return ""
	}
}

// ETags returns the acceptable ETags of an If-Match with tags (canonical
// form), or nil for any other kind of condition.
func (c Conditions) ETags() []string { return append([]string(nil), c.etags...) }

// Evaluate returns nil if the write may proceed given the object's state,
// else the S3 error: 412 PreconditionFailed naming the header, or 404
// NoSuchKey for If-Match on a missing object (as S3 does for writes and deletes).
func (c Conditions) Evaluate(s ObjectState) error {
	switch c.kind {
	case kindCreate:
		if s.Exists {
			return s3err.Precondition(HeaderIfNoneMatch)
		}
	case kindMatchAny:
		if !s.Exists {
			return s3err.New(s3err.NoSuchKey)
		}
	case kindMatchTag:
		if !s.Exists {
			return s3err.New(s3err.NoSuchKey)
		}
		if !c.matches(s.ETag) {
			return s3err.Precondition(HeaderIfMatch)
		}
	}
	return nil
}

// LeaseETag is the lease sort key for this write given the state that
// satisfied Evaluate: "*" for a create; for If-Match the object's current ETag
// in canonical form, so that If-Match: * and tag lists lease the version that
// is actually being replaced and contend with every other writer of it.
// It is "" for an unconditional write, which takes no lease.
func (c Conditions) LeaseETag(s ObjectState) string {
	switch c.kind {
	case kindCreate:
		return wildcard
	case kindMatchAny, kindMatchTag:
		return CanonicalETag(s.ETag)
	default:
		return ""
	}
}

// Covers reports whether a lease taken under leaseETag still guards a write
// when the re-check (SPEC §3 step 4) finds state s. A create's "*" lease
// covers any absent object; an If-Match lease covers only the version it
// names. If-Match: * and tag lists may still hold for a different version
// than the one leased (the object was replaced in between): then Evaluate
// passes but Covers is false, and the caller must lease LeaseETag(s) anew,
// or writers replacing different versions would not contend.
func (c Conditions) Covers(leaseETag string, s ObjectState) bool {
	switch c.kind {
	case kindCreate:
		return leaseETag == wildcard && !s.Exists
	case kindMatchAny, kindMatchTag:
		return s.Exists && ETagsEqual(leaseETag, s.ETag)
	default:
		return true
	}
}

// String describes the condition for logs.
func (c Conditions) String() string {
	switch c.kind {
	case kindCreate:
		return "If-None-Match: *"
	case kindMatchAny:
		return "If-Match: *"
	case kindMatchTag:
		return "If-Match: " + strings.Join(c.etags, ", ")
	default:
		return "unconditional"
	}
}

func (c Conditions) matches(current string) bool {
	for _, want := range c.etags {
		if ETagsEqual(want, current) {
			return true
		}
	}
	return false
}

func parseIfMatch(v string) (Conditions, error) {
	tags, err := ParseETagList(v)
	if err != nil {
		invalid := s3err.Newf(s3err.InvalidArgument, "Invalid If-Match header value")
		invalid.Cause = err
		return Conditions{}, invalid.With("ArgumentName", HeaderIfMatch).With("ArgumentValue", v)
	}
	if len(tags) == 1 && tags[0] == wildcard {
		return Conditions{kind: kindMatchAny}, nil
	}
	return Conditions{kind: kindMatchTag, etags: tags}, nil
}

// headerValue joins repeated header lines with commas, which HTTP defines as
// equivalent to one comma-separated line. ok is false only when the header is
// absent; an empty value is present (and then rejected as malformed).
func headerValue(h http.Header, name string) (value string, ok bool) {
	values := h.Values(name)
	if len(values) == 0 {
		return "", false
	}
	return strings.Join(values, ","), true
}

func notImplemented(header string) *s3err.Error {
	return s3err.New(s3err.NotImplemented).With("Header", header)
}

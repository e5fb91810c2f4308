// Package precondition parses and evaluates the conditional-write headers
// (If-Match, If-None-Match) that s3cond adds on top of a backend which may
// not support them. It does no I/O: the caller supplies what a HEAD on the
// backend found, and gets back nil or the *s3err.Error that Amazon S3 answers.
package precondition

import (
	"net/http"
	"strings"
	"time"

	"github.com/s3cond/s3cond/s3err"
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
// CopyObject destination, CompleteMultipartUpload) or of a DeleteObject,
// and a DeleteObject's x-amz-if-match-size and
// x-amz-if-match-last-modified-time (see delete.go). The zero value is "no
// condition".
type Conditions struct {
	kind kind
	// etags holds the acceptable ETags in CanonicalETag form (kindMatchTag only).
	etags []string
	// deleteIf holds a DeleteObject's size and last-modified conditions.
	deleteIf deleteConditions
}

// ObjectState is what a HEAD on the backend found. Size and LastModified
// are only read by DeleteObject's size and time conditions; a HEAD that did
// not report them (Size < 0, LastModified zero) fails those conditions.
type ObjectState struct {
	Exists       bool
	ETag         string
	Size         int64
	LastModified time.Time
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

// ParseDelete reads If-Match, x-amz-if-match-size and
// x-amz-if-match-last-modified-time for DeleteObject; S3 accepts them alone
// or together. S3 has no If-None-Match on a delete and answers 501
// NotImplemented for it.
func ParseDelete(h http.Header) (Conditions, error) {
	if _, ok := headerValue(h, HeaderIfNoneMatch); ok {
		return Conditions{}, notImplemented(HeaderIfNoneMatch)
	}
	deleteIf, err := parseDeleteConditions(h)
	if err != nil {
		return Conditions{}, err
	}
	c := Conditions{deleteIf: deleteIf}
	if ifMatch, ok := headerValue(h, HeaderIfMatch); ok {
		if c, err = parseIfMatch(ifMatch); err != nil {
			return Conditions{}, err
		}
		c.deleteIf = deleteIf
	}
	return c, nil
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

// Create is If-None-Match: *, for a write s3cond itself takes as a create
// (a create_only bucket's unconditional writes).
func Create() Conditions { return Conditions{kind: kindCreate} }

// HasIfMatch reports whether If-Match (ETags or "*") is present: what a
// bucket that requires conditional deletes asks of a delete, whatever its
// size and time conditions.
func (c Conditions) HasIfMatch() bool { return c.kind == kindMatchAny || c.kind == kindMatchTag }

// Active reports whether any condition is present.
func (c Conditions) Active() bool { return c.kind != kindNone || c.deleteIf.active() }

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
		return c.deleteIf.header()
	}
}

// ETags returns the acceptable ETags of an If-Match with tags (canonical
// form), or nil for any other kind of condition.
func (c Conditions) ETags() []string { return append([]string(nil), c.etags...) }

// Evaluate returns nil if the write may proceed given the object's state,
// else the S3 error: 412 PreconditionFailed naming the header, or 404
// NoSuchKey for If-Match on a missing object (as S3 does for writes and
// deletes). A delete's size and time conditions are checked after If-Match.
func (c Conditions) Evaluate(s ObjectState) error {
	if err := c.evaluateETag(s); err != nil {
		return err
	}
	return c.deleteIf.evaluate(s)
}

func (c Conditions) evaluateETag(s ObjectState) error {
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
// A delete with only size or time conditions leases the version it deletes,
// or "*" when there is none (it then deletes nothing, but must not let a
// create slip in between its check and its delete).
// It is "" for an unconditional write, which takes no lease.
func (c Conditions) LeaseETag(s ObjectState) string {
	switch {
	case c.kind == kindCreate:
		return wildcard
	case c.kind == kindMatchAny, c.kind == kindMatchTag, c.deleteIf.active() && s.Exists:
		return CanonicalETag(s.ETag)
	case c.deleteIf.active():
		return wildcard
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
	switch {
	case c.kind == kindCreate, c.kind == kindNone && c.deleteIf.active() && leaseETag == wildcard:
		return leaseETag == wildcard && !s.Exists
	case c.kind == kindMatchAny, c.kind == kindMatchTag, c.deleteIf.active():
		return s.Exists && ETagsEqual(leaseETag, s.ETag)
	default:
		return true
	}
}

// String describes the condition for logs.
func (c Conditions) String() string {
	var s string
	switch c.kind {
	case kindCreate:
		s = "If-None-Match: *"
	case kindMatchAny:
		s = "If-Match: *"
	case kindMatchTag:
		s = "If-Match: " + strings.Join(c.etags, ", ")
	}
	if d := c.deleteIf.String(); d != "" {
		if s != "" {
			s += "; "
		}
		s += d
	}
	if s == "" {
		return "unconditional"
	}
	return s
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

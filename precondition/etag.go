package precondition

import (
	"errors"
	"fmt"
	"strings"
)

// wildcard is the "*" of If-Match / If-None-Match, which matches any current object.
const wildcard = "*"

// CanonicalETag returns etag as s3cond stores and compares it: the W/ prefix and
// one pair of surrounding double quotes removed, then exactly one pair re-added,
// so `abc`, `"abc"` and `W/"abc"` all become `"abc"`. Backends differ in whether
// they quote ETags (and clients in whether they echo the quotes), so lease keys
// built from this form are the same for every writer of one object version.
func CanonicalETag(etag string) string {
	return `"` + opaqueTag(etag) + `"`
}

// ETagsEqual compares two ETags the way S3 does for conditional requests:
// surrounding quotes and a W/ prefix are ignored; the rest (including the
// "-N" suffix of a multipart ETag) is an opaque, case-sensitive string.
// An empty ETag never equals anything, because it cannot identify a version.
func ETagsEqual(a, b string) bool {
	x, y := opaqueTag(a), opaqueTag(b)
	return x != "" && x == y
}

// opaqueTag strips whitespace, a W/ prefix and surrounding quotes. It is lenient
// (a lone leading or trailing quote is dropped too) because its inputs are
// ETags a backend reported, not client syntax to validate.
func opaqueTag(etag string) string {
	t := strings.TrimSpace(etag)
	t = strings.TrimPrefix(t, "W/")
	t = strings.TrimPrefix(t, `"`)
	t = strings.TrimSuffix(t, `"`)
	return t
}

// ErrMalformedETagList is wrapped by every ParseETagList error.
var ErrMalformedETagList = errors.New("malformed entity-tag list")

// ParseETagList parses an If-Match / If-None-Match value: either "*" alone, or
// a comma-separated list of entity tags, each quoted ("abc"), weak (W/"abc")
// or bare (abc, as some S3 clients send after stripping the quotes). The result
// holds "*" alone or the tags in CanonicalETag form, in the order given.
// Empty list elements are ignored, as RFC 9110 §5.6.1 asks of recipients, but
// at least one tag is required.
func ParseETagList(v string) ([]string, error) {
	if strings.TrimSpace(v) == wildcard {
		return []string{wildcard}, nil
	}
	var tags []string
	rest := v
	for {
		rest = strings.TrimLeft(rest, " \t")
		if rest == "" {
			break
		}
		if rest[0] == ',' { // empty list element
			rest = rest[1:]
			continue
		}
		tag, after, err := nextTag(rest)
		if err != nil {
			return nil, err
		}
		tags = append(tags, tag)
		after = strings.TrimLeft(after, " \t")
		if after != "" && after[0] != ',' {
			return nil, fmt.Errorf("%w: unexpected %q after entity tag", ErrMalformedETagList, after)
		}
		rest = after
	}
	if len(tags) == 0 {
		return nil, fmt.Errorf("%w: no entity tag", ErrMalformedETagList)
	}
	return tags, nil
}

// nextTag reads one entity tag from the start of s and returns it in canonical
// form with the unread remainder.
func nextTag(s string) (tag, rest string, err error) {
	s = strings.TrimPrefix(s, "W/")
	if strings.HasPrefix(s, `"`) {
		end := strings.IndexByte(s[1:], '"')
		if end < 0 {
			return "", "", fmt.Errorf("%w: unbalanced quote", ErrMalformedETagList)
		}
		inner := s[1 : 1+end]
		if err := checkTagChars(inner); err != nil {
			return "", "", err
		}
		return `"` + inner + `"`, s[2+end:], nil
	}
	end := strings.IndexAny(s, ", \t")
	if end < 0 {
		end = len(s)
	}
	inner := s[:end]
	if inner == wildcard {
		return "", "", fmt.Errorf("%w: * must stand alone", ErrMalformedETagList)
	}
	if inner == "" {
		return "", "", fmt.Errorf("%w: empty entity tag", ErrMalformedETagList)
	}
	if err := checkTagChars(inner); err != nil {
		return "", "", err
	}
	return `"` + inner + `"`, s[end:], nil
}

// checkTagChars enforces RFC 9110's etagc: visible ASCII except the double
// quote, plus obs-text. Bare tags reach here without their delimiters, so a
// quote inside means unbalanced quoting.
func checkTagChars(inner string) error {
	for i := 0; i < len(inner); i++ {
		c := inner[i]
		if c == '"' {
			return fmt.Errorf("%w: unbalanced quote", ErrMalformedETagList)
		}
		if c < 0x21 || c == 0x7f {
			return fmt.Errorf("%w: control character or space in entity tag", ErrMalformedETagList)
		}
	}
	return nil
}

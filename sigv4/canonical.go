package sigv4

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/s3cond/s3cond/internal/requestline"
)

// canonicalInput is everything the canonical request is built from. It is
// independent of the signing service so that the generic AWS test suite
// (service "service") runs through the same code as S3 requests.
type canonicalInput struct {
	method        string
	rawPath       string // path as the client sent it, before any decoding
	rawQuery      string // query as the client sent it
	presigned     bool   // leave X-Amz-Signature out of the canonical query
	header        http.Header
	host          string
	contentLength int64    // r.ContentLength; Go keeps it out of Header on client requests
	transferCodes []string // r.TransferEncoding; Go's server moves it out of Header
	signedHeaders string   // verbatim signed-headers line; signedHeaderNames splits it
	payloadHash   string
}

// newCanonicalInput collects the parts of r a canonical request needs.
func newCanonicalInput(r *http.Request, fields authFields, payloadHash string, presigned bool) canonicalInput {
	host := r.Host
	if host == "" && r.URL != nil {
		host = r.URL.Host
	}
	return canonicalInput{
		method:        r.Method,
		rawPath:       requestline.RawPath(r),
		rawQuery:      r.URL.RawQuery,
		presigned:     presigned,
		header:        r.Header,
		host:          host,
		contentLength: r.ContentLength,
		transferCodes: r.TransferEncoding,
		signedHeaders: fields.signedHeaders,
		payloadHash:   payloadHash,
	}
}

// canonicalRequest builds the SigV4 canonical request. uri is the canonical
// URI chosen by the caller (see canonicalURI). ok is false when a header the
// client signed is missing from the request; missing then names it.
func (in canonicalInput) canonicalRequest(uri string) (request string, missing string, ok bool) {
	b, missing, ok := in.appendCanonicalRequest(make([]byte, 0, 256+len(in.rawQuery)+len(uri)), uri)
	if !ok {
		return "", missing, false
	}
	return string(b), "", true
}

// appendCanonicalRequest appends the canonical request to dst (see
// canonicalRequest): the verifier builds it in a pooled buffer.
func (in canonicalInput) appendCanonicalRequest(dst []byte, uri string) (out []byte, missing string, ok bool) {
	b := dst
	b = append(b, in.method...)
	b = append(b, '\n')
	b = append(b, uri...)
	b = append(b, '\n')
	b = appendCanonicalQuery(b, in.rawQuery, in.presigned)
	b = append(b, '\n')
	for name := range signedHeaderNames(in.signedHeaders) {
		b = append(b, name...)
		b = append(b, ':')
		var found bool
		if b, found = in.appendHeaderValues(b, name); !found {
			return b[:len(dst)], name, false
		}
		b = append(b, '\n')
	}
	b = append(b, '\n')
	b = append(b, in.signedHeaders...)
	b = append(b, '\n')
	b = append(b, in.payloadHash...)
	return b, "", true
}

// appendHeaderValues appends the canonical values of a signed header,
// trimmed and joined with commas, reaching for the fields Go keeps outside
// Header.
func (in canonicalInput) appendHeaderValues(b []byte, name string) ([]byte, bool) {
	switch name {
	case "host":
		return appendTrimmedCollapsed(b, in.host), in.host != ""
	case "content-length":
		if v, ok := in.header["Content-Length"]; ok {
			return appendJoinedValues(b, v), true
		}
		if in.contentLength >= 0 {
			return strconv.AppendInt(b, in.contentLength, 10), true
		}
		return b, false
	case "transfer-encoding":
		if v, ok := in.header["Transfer-Encoding"]; ok {
			return appendJoinedValues(b, v), true
		}
		if len(in.transferCodes) > 0 {
			for i, code := range in.transferCodes {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendTrimmedCollapsed(b, code)
			}
			return b, true
		}
		return b, false
	}
	v, ok := lookupHeader(in.header, name)
	return appendJoinedValues(b, v), ok
}

// lookupHeader finds the values of a header named in any case.
func lookupHeader(h http.Header, name string) ([]string, bool) {
	var key [64]byte
	if canonical, ok := appendCanonicalHeaderKey(key[:0], name); ok {
		// A map index by string(bytes) does not allocate the string.
		if v, found := h[string(canonical)]; found {
			return v, true
		}
	} else if v, found := h[http.CanonicalHeaderKey(name)]; found {
		return v, true
	}
	// Headers set through the map directly keep their original spelling.
	for key, vals := range h {
		if strings.EqualFold(key, name) {
			return vals, true
		}
	}
	return nil, false
}

// appendCanonicalHeaderKey appends name as textproto canonicalises it
// ("x-amz-date" -> "X-Amz-Date"); ok is false for a name it would leave
// alone (a byte outside letters, digits and '-') or one that does not fit.
func appendCanonicalHeaderKey(dst []byte, name string) ([]byte, bool) {
	if len(name) > cap(dst)-len(dst) {
		return dst, false
	}
	upper := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z':
			if upper {
				c -= 'a' - 'A'
			}
		case 'A' <= c && c <= 'Z':
			if !upper {
				c += 'a' - 'A'
			}
		case '0' <= c && c <= '9', c == '-':
		default:
			return dst, false
		}
		dst = append(dst, c)
		upper = c == '-'
	}
	return dst, true
}

func appendJoinedValues(b []byte, values []string) []byte {
	for i, v := range values {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendTrimmedCollapsed(b, v)
	}
	return b
}

// canonicalURI is S3's canonical URI: the path decoded once and encoded once
// with UriEncode, keeping '/'. S3 neither removes dot segments nor collapses
// slashes, and never encodes twice.
func canonicalURI(rawPath string) string {
	if rawPath == "" {
		return "/"
	}
	return uriEncode(percentDecode(rawPath, false), false)
}

// verbatimURI is the path exactly as sent, for clients that sign what they
// send without re-encoding it (lower-case escapes, raw sub-delimiters).
func verbatimURI(rawPath string) string {
	if rawPath == "" {
		return "/"
	}
	return rawPath
}

// canonicalQuery decodes every name and value of rawQuery and re-encodes them
// with UriEncode, sorted by name then value. A parameter without '=' has an
// empty value. presigned drops X-Amz-Signature, which cannot sign itself.
func canonicalQuery(rawQuery string, presigned bool) string {
	return string(appendCanonicalQuery(nil, rawQuery, presigned))
}

// maxStackQueryParams is how many parameters appendCanonicalQuery sorts in
// an array on its stack; a longer query (rare) takes an allocation.
const maxStackQueryParams = 16

// appendCanonicalQuery appends canonicalQuery(rawQuery, presigned) to b. A
// name or value already in canonical form (most are) is used as it stands,
// so a typical query is canonicalised without allocating.
func appendCanonicalQuery(b []byte, rawQuery string, presigned bool) []byte {
	if rawQuery == "" {
		return b
	}
	type param struct{ name, value string }
	var stack [maxStackQueryParams]param
	params := stack[:0]
	for piece := range strings.SplitSeq(rawQuery, "&") {
		if piece == "" {
			continue
		}
		name, value, _ := strings.Cut(piece, "=")
		name = canonicalQueryComponent(name)
		if presigned && name == querySignature {
			continue
		}
		params = append(params, param{name, canonicalQueryComponent(value)})
	}
	slices.SortFunc(params, func(a, b param) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return strings.Compare(a.value, b.value)
	})
	for i, p := range params {
		if i > 0 {
			b = append(b, '&')
		}
		b = append(b, p.name...)
		b = append(b, '=')
		b = append(b, p.value...)
	}
	return b
}

// canonicalQueryComponent is uriEncode(percentDecode(s, true), true), without
// allocating when s is already in that form: every byte unreserved, or a
// '%' with two upper-case hex digits that encode a byte UriEncode escapes.
func canonicalQueryComponent(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isUnreserved(c) {
			continue
		}
		if c != '%' || i+2 >= len(s) || !isUpperHex(s[i+1]) || !isUpperHex(s[i+2]) || isUnreserved(unhex(s[i+1])<<4|unhex(s[i+2])) {
			return uriEncode(percentDecode(s, true), true)
		}
		i += 2
	}
	return s
}

func isUpperHex(c byte) bool {
	return '0' <= c && c <= '9' || 'A' <= c && c <= 'F'
}

// percentDecode decodes %XX escapes; a '%' not followed by two hex digits
// stays literal (it is then encoded as %25, as S3 does for such keys).
// In a query, '+' means space (form encoding, as S3 and the AWS SDKs read it).
func percentDecode(s string, plusIsSpace bool) string {
	if !strings.ContainsAny(s, "%+") {
		return s
	}
	if !plusIsSpace && !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
		case c == '+' && plusIsSpace:
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// uriEncode is SigV4's UriEncode: every byte except A-Za-z0-9-_.~ becomes %XX
// with upper-case hex; '/' stays literal unless encodeSlash.
func uriEncode(s string, encodeSlash bool) string {
	needs := false
	for i := 0; i < len(s); i++ {
		if !isUnreserved(s[i]) && (encodeSlash || s[i] != '/') {
			needs = true
			break
		}
	}
	if !needs {
		return s
	}
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s) * 3)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isUnreserved(c) || (!encodeSlash && c == '/') {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&0xF])
	}
	return b.String()
}

func isUnreserved(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		c == '-' || c == '_' || c == '.' || c == '~'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// stringToSign is the SigV4 string to sign for a canonical request.
func stringToSign(amzDate time.Time, scope, canonicalRequest string) string {
	sum := sha256.Sum256([]byte(canonicalRequest))
	var b strings.Builder
	b.Grow(len(signingAlgorithm) + len(amzDateLayout) + len(scope) + 2*sha256.Size + 3)
	b.WriteString(signingAlgorithm)
	b.WriteByte('\n')
	b.WriteString(amzDate.UTC().Format(amzDateLayout))
	b.WriteByte('\n')
	b.WriteString(scope)
	b.WriteByte('\n')
	b.WriteString(hex.EncodeToString(sum[:]))
	return b.String()
}

// parseQuery decodes rawQuery the way canonicalQuery does, so that the presign
// parser and the canonical query agree on how "+" and odd escapes decode.
// Unlike url.ParseQuery it never fails: S3 accepts such queries. The first
// value of every name is a full slice of one shared array (an append to it
// copies), so a query costs the map and that array, not a slice per name.
func parseQuery(rawQuery string) url.Values {
	if rawQuery == "" {
		return nil // reads of a nil map find nothing, as of an empty one
	}
	pieces := strings.Count(rawQuery, "&") + 1
	values := make(url.Values, pieces)
	firsts := make([]string, 0, pieces) // never outgrown: one per piece at most
	for piece := range strings.SplitSeq(rawQuery, "&") {
		if piece == "" {
			continue
		}
		name, value, _ := strings.Cut(piece, "=")
		name, value = percentDecode(name, true), percentDecode(value, true)
		if prior, seen := values[name]; seen {
			values[name] = append(prior, value)
			continue
		}
		firsts = append(firsts, value)
		values[name] = firsts[len(firsts)-1 : len(firsts) : len(firsts)]
	}
	return values
}

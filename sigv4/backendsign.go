package sigv4

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Signing a backend request from its canonical pieces, written into pooled
// buffers. aws-sdk-go-v2's general signer did the same work with about forty
// allocations per request (a map of signed headers, lower-cased names,
// strings.Builders, hmac.New for each of its HMACs); this does it with one,
// the Authorization value.
//
// It signs what the SDK's signer signs, so that every backend that verified
// those signatures verifies these: host; content-length when the body is not
// empty; and every header of the request except Authorization, User-Agent,
// X-Amzn-Trace-Id, Expect and Transfer-Encoding (which proxies and client
// libraries may change on the way). TestBackendSignatureMatchesSDK compares
// the two.

// unsignedBackendHeaders are the header names never signed (compared without
// regard to case). Host and Content-Length are signed from the request's
// fields, not from the header map, where Go ignores them when it writes.
var unsignedBackendHeaders = [...]string{
	"Authorization", "User-Agent", "X-Amzn-Trace-Id", "Expect", "Transfer-Encoding",
	"Host", "Content-Length",
}

// Pseudo-names standing for the values taken from the request's fields. They
// are never header-map keys (those are excluded above), so they cannot
// collide with one.
const (
	signHostName          = "Host"
	signContentLengthName = "Content-Length"
)

func signedBackendHeader(name string) bool {
	for _, n := range unsignedBackendHeaders {
		if strings.EqualFold(name, n) {
			return false
		}
	}
	return true
}

// signBackendRequest adds X-Amz-Date (already in out.Header) and
// Authorization to out. out.Header must be out's own map; amzDate and day
// are the request time as 20060102T150405Z and 20060102.
func signBackendRequest(s *signScratch, out *http.Request, host, payloadHash, accessKeyID string, key *signingKey, region, amzDate, day string) string {
	s.names = s.names[:0]
	s.names = append(s.names, signHostName)
	if out.ContentLength > 0 {
		s.names = append(s.names, signContentLengthName)
	}
	for name := range out.Header {
		if signedBackendHeader(name) {
			s.names = append(s.names, name)
		}
	}
	slices.SortFunc(s.names, compareHeaderNames)

	c := s.canonical[:0]
	c = append(c, out.Method...)
	c = append(c, '\n')
	c = append(c, backendURIPath(out)...)
	c = append(c, '\n')
	c = appendCanonicalQuery(c, out.URL.RawQuery, false)
	c = append(c, '\n')
	for i, name := range s.names {
		if i > 0 && strings.EqualFold(name, s.names[i-1]) {
			continue // written with the first spelling of the name
		}
		c = appendLowerASCII(c, name)
		c = append(c, ':')
		c = appendSignedValues(c, out, host, s.names[i:])
		c = append(c, '\n')
	}
	c = append(c, '\n')
	signedStart := len(c)
	for i, name := range s.names {
		if i > 0 && strings.EqualFold(name, s.names[i-1]) {
			continue
		}
		if i > 0 {
			c = append(c, ';')
		}
		c = appendLowerASCII(c, name)
	}
	signedEnd := len(c)
	c = append(c, '\n')
	c = append(c, payloadHash...)
	s.canonical = c

	scope := credentialScope{date: day, region: region, service: serviceS3, terminator: scopeTerminator}
	s.toSign = appendStringToSign(s.toSign[:0], []byte(amzDate), scope, c)
	s.mac = key.sign(s.mac[:0], s.toSign)
	signature := s.mac

	a := s.toSign[:0]
	a = append(a, signingAlgorithm...)
	a = append(a, " Credential="...)
	a = append(a, accessKeyID...)
	a = append(a, '/')
	a = appendScope(a, scope)
	a = append(a, ", SignedHeaders="...)
	a = append(a, c[signedStart:signedEnd]...)
	a = append(a, ", Signature="...)
	a = appendHex(a, signature[:])
	s.toSign = a
	return string(a)
}

// appendSignedValues appends the canonical values of the header names[0],
// and of the names after it that differ from it only in case (a header map
// filled directly may hold both), joined with commas.
func appendSignedValues(c []byte, out *http.Request, host string, names []string) []byte {
	first := true
	for _, name := range names {
		if !strings.EqualFold(name, names[0]) {
			break
		}
		var values []string
		switch name {
		case signHostName:
			c = appendTrimmedCollapsed(c, host)
			first = false
			continue
		case signContentLengthName:
			c = strconv.AppendInt(c, out.ContentLength, 10)
			first = false
			continue
		default:
			values = out.Header[name]
		}
		for _, v := range values {
			if !first {
				c = append(c, ',')
			}
			c = appendTrimmedCollapsed(c, v)
			first = false
		}
	}
	return c
}

// compareHeaderNames orders names as their lower-case forms sort; names
// equal but for case are ordered among themselves, so the result is the
// same whatever order the header map gave them in.
func compareHeaderNames(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		ca, cb := lowerASCII(a[i]), lowerASCII(b[i])
		if ca != cb {
			if ca < cb {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return strings.Compare(a, b)
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func appendLowerASCII(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		dst = append(dst, lowerASCII(s[i]))
	}
	return dst
}

// appendTrimmedCollapsed is writeTrimmedCollapsed for a byte slice: v
// without leading or trailing whitespace, inner runs of spaces as one.
func appendTrimmedCollapsed(dst []byte, v string) []byte {
	v = strings.Trim(v, " \t\r\n")
	pendingSpace := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == ' ' || c == '\r' || c == '\n' {
			pendingSpace = true
			continue
		}
		if pendingSpace {
			dst = append(dst, ' ')
			pendingSpace = false
		}
		dst = append(dst, c)
	}
	return dst
}

// backendURIPath is the path as it goes on the wire, which is what the
// resigner signs (it has already put the path in S3's canonical encoding).
func backendURIPath(r *http.Request) string {
	path := r.URL.EscapedPath()
	if opaque := r.URL.Opaque; opaque != "" {
		// "//host/path" or "/path": the path starts at the first '/' after
		// any authority.
		opaque, _, _ = strings.Cut(opaque, "?")
		opaque = strings.TrimPrefix(opaque, "//")
		path = ""
		if i := strings.IndexByte(opaque, '/'); i >= 0 {
			path = opaque[i:]
		}
	}
	if path == "" {
		return "/"
	}
	return path
}

// signingTime is a request time in the two spellings SigV4 uses.
type signingTime struct {
	unix    int64
	amzDate string // 20060102T150405Z
	day     string // 20060102
}

// signingClock formats the signing time once per second rather than once
// per request.
type signingClock struct {
	now  func() time.Time
	last atomic.Pointer[signingTime]
}

func (c *signingClock) stamp() *signingTime {
	t := c.now().UTC()
	sec := t.Unix()
	if st := c.last.Load(); st != nil && st.unix == sec {
		return st
	}
	amzDate := t.Format(amzDateLayout)
	st := &signingTime{unix: sec, amzDate: amzDate, day: amzDate[:len(scopeDateLayout)]}
	c.last.Store(st)
	return st
}

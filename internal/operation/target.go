package operation

import (
	"net"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/s3cond/s3cond/internal/requestline"
	"github.com/s3cond/s3cond/s3err"
)

// Target is what a request addresses: a bucket and key in the client's
// namespace, with the key also kept exactly as the client escaped it, so the
// backend receives the same bytes.
type Target struct {
	Bucket string
	Key    string
	// RawKey is the key as escaped on the wire, without the leading '/'.
	RawKey string
}

// MaxKeyBytes is S3's limit on object key length.
const MaxKeyBytes = 1024

// ResolveTarget reads bucket and key from a path-style request
// (/bucket/key) or, when domain is set and the Host is <bucket>.<domain>, a
// virtual-hosted one (/key).
func ResolveTarget(r *http.Request, domain string) (Target, error) {
	rawPath := requestline.RawPath(r)
	if !strings.HasPrefix(rawPath, "/") {
		return Target{}, s3err.New(s3err.InvalidURI)
	}
	rawPath = rawPath[1:]
	var t Target
	if b := VirtualHostBucket(r.Host, domain); b != "" {
		t.Bucket = b
		t.RawKey = rawPath
	} else {
		rawBucket, rawKey, _ := strings.Cut(rawPath, "/")
		bucket, err := url.PathUnescape(rawBucket)
		if err != nil {
			return Target{}, s3err.New(s3err.InvalidURI)
		}
		t.Bucket = bucket
		t.RawKey = rawKey
	}
	key, err := url.PathUnescape(t.RawKey)
	if err != nil {
		return Target{}, s3err.New(s3err.InvalidURI)
	}
	if !utf8.ValidString(key) {
		return Target{}, s3err.Newf(s3err.InvalidURI, "Object key is not valid UTF-8.")
	}
	if len(key) > MaxKeyBytes {
		return Target{}, s3err.New(s3err.KeyTooLongError)
	}
	t.Key = key
	if t.Bucket != "" && !ValidBucketName(t.Bucket) {
		return Target{}, s3err.New(s3err.InvalidBucketName)
	}
	return t, nil
}

func VirtualHostBucket(host, domain string) string {
	if domain == "" {
		return ""
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(host)
	suffix := "." + strings.ToLower(domain)
	if strings.HasSuffix(host, suffix) {
		return strings.TrimSuffix(host, suffix)
	}
	return ""
}

// ValidBucketName accepts what S3 accepts for (legacy and current) bucket
// names in requests: 3–63 characters of letters, digits, '.', '-' and '_'.
func ValidBucketName(b string) bool {
	if len(b) < 3 || len(b) > 63 {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// CheckRequestTarget refuses a request target with a byte RFC 9112 does not
// allow in one (origin-form: absolute-path [ "?" query ], built of pchar,
// '/' and '?'), before anything else is read of the request. Go's server
// passes such bytes through, and a store reads them its own way: versitygw
// drops everything after a '#', so a read-only key's
// "POST /b/k?x-id=#&select&select-type=2" reached it as another operation.
// A '%' must start a two-digit escape.
func CheckRequestTarget(r *http.Request) error {
	target := r.RequestURI
	if target == "" {
		return nil // not from a server: a test's or s3cond's own request
	}
	if !strings.HasPrefix(target, "/") {
		// absolute-form: the authority is net/http's to parse; the path
		// and query follow the same rules.
		if _, afterScheme, ok := strings.Cut(target, "://"); ok {
			target = ""
			if i := strings.IndexByte(afterScheme, '/'); i >= 0 {
				target = afterScheme[i:]
			}
		}
	}
	for i := 0; i < len(target); i++ {
		c := target[i]
		switch {
		case isPchar(c), c == '/', c == '?':
		case c == '%' && i+2 < len(target) && isHex(target[i+1]) && isHex(target[i+2]):
			i += 2
		default:
			return s3err.Newf(s3err.InvalidURI, "Couldn't parse the specified URI: the request target has a byte RFC 9112 does not allow (%q).", string(c))
		}
	}
	return nil
}

// isPchar reports the bytes of RFC 3986's pchar other than pct-encoded:
// unreserved, sub-delims, ':' and '@'.
func isPchar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~!$&'()*+,;=:@", c) >= 0
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

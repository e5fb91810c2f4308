package proxy

import (
	"net/http"
	"strings"

	"github.com/s3cond/s3cond/s3err"
)

// checkRequestTarget refuses a request target with a byte RFC 9112 does not
// allow in one (origin-form: absolute-path [ "?" query ], built of pchar,
// '/' and '?'), before anything else is read of the request. Go's server
// passes such bytes through, and a store reads them its own way: versitygw
// drops everything after a '#', so a read-only key's
// "POST /b/k?x-id=#&select&select-type=2" reached it as another operation.
// A '%' must start a two-digit escape.
func checkRequestTarget(r *http.Request) error {
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
	return isUnreserved(c) || strings.IndexByte("!$&'()*+,;=:@", c) >= 0
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

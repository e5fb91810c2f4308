// Package requestline reads what a client's request line says as the client
// sent it: the path byte for byte, and the names of the SigV2 query
// parameters, which authenticate a request rather than address it. sigv4
// verifies signatures over them and internal/operation routes on them; the
// package imports neither, so neither has to import the other.
package requestline

import (
	"net/http"
	"strings"
)

// Names of the SigV2 presigned-URL query parameters, as S3 spells them.
const (
	SignatureV2AccessKeyID = "AWSAccessKeyId"
	SignatureV2Expires     = "Expires"
	SignatureV2Signature   = "Signature"
)

// SignatureV2Params are the SigV2 presigned-URL parameters. The proxy never
// forwards them: the backend request carries s3cond's own signature.
var SignatureV2Params = []string{SignatureV2AccessKeyID, SignatureV2Expires, SignatureV2Signature}

// RawPath returns the request path byte for byte as the client sent it:
// r.URL.Path is decoded, and r.URL.RawPath is kept only when it differs, so
// the path that is signed (and routed on) comes from the request line.
// Server requests carry it in RequestURI (origin form "/p?q" or absolute
// form "http://host/p?q"); requests built in-process only have the URL.
func RawPath(r *http.Request) string {
	uri := r.RequestURI
	if uri == "" {
		if r.URL.Opaque != "" {
			return r.URL.Opaque
		}
		return r.URL.EscapedPath()
	}
	if i := strings.IndexByte(uri, '?'); i >= 0 {
		uri = uri[:i]
	}
	if !strings.HasPrefix(uri, "/") {
		if _, afterScheme, ok := strings.Cut(uri, "://"); ok {
			if i := strings.IndexByte(afterScheme, '/'); i >= 0 {
				return afterScheme[i:]
			}
			return "/"
		}
	}
	return uri
}

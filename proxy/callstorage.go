package proxy

import (
	"net/http"
	"net/url"

	"github.com/s3cond/s3cond/sigv4"
)

// A call's per-request values that the hot path would otherwise allocate
// one by one live in the call's own allocation: the verified request and
// the first outbound URL.

// intoAuthenticator is an Authenticator that can put its result in
// storage of the caller's: *sigv4.Verifier, whose Request then lives in
// the call's allocation instead of one of its own.
type intoAuthenticator interface {
	VerifyInto(r *http.Request, dst *sigv4.Request) (*sigv4.Request, error)
}

func (p *Proxy) verify(c *call) (*sigv4.Request, error) {
	if into, ok := p.auth.(intoAuthenticator); ok {
		return into.VerifyInto(c.r, c.verified)
	}
	return p.auth.Verify(c.r)
}

// newBackendURL is storage for an outbound request's URL: the call's own
// for its first request (a plain forward makes one), a new one for any
// after it, which may be in flight while the first still is.
func (c *call) newBackendURL() *url.URL {
	if c.backendURLUsed {
		return new(url.URL)
	}
	c.backendURLUsed = true
	return &c.backendURL
}

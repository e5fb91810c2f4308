package proxy

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/s3err"
)

// CORS headers on the answers s3cond makes itself.
//
// S3 adds the matching CORS rule's headers to every answer to a request
// with an Origin, errors included, so a page that made a cross-origin
// request can read the answer. The store does the same for the answers it
// makes, and s3cond relays those headers; but the answers s3cond makes
// itself (a refused signature, an expired URL, a 412 from its lease check,
// its 400s, and every answer to a POST Object, whose PutObject reaches the
// store without the page's Origin) would carry none, and the browser would
// hand the page a network error instead of the status. s3cond has no CORS
// configuration of its own, so for those answers it asks the store, as for
// a preflight: OPTIONS on the bucket with only the request's Origin and its
// method as Access-Control-Request-Method. Nothing else of the request is
// forwarded (no key, no query, no other header, no body), the lookup is
// bounded by corsLookupTimeout, and only the headers that matter on an
// actual answer are taken from the store's: Access-Control-Allow-Origin,
// -Allow-Credentials, -Expose-Headers and Vary.

// corsLookupTimeout bounds the lookup: the answer waits for it.
const corsLookupTimeout = 2 * time.Second

// corsAnswerHeaders are the store's preflight headers an answer takes.
var corsAnswerHeaders = []string{
	"Access-Control-Allow-Origin", "Access-Control-Allow-Credentials", "Access-Control-Expose-Headers", "Vary",
}

// addErrorCORS sets on c's error answer the CORS headers the bucket's
// rules give an answer to c's request. Not for a 5xx: the store is likely
// unreachable, and the lookup would only add its wait. (fail does not ask
// for the answer of a write under its lease.)
func (p *Proxy) addErrorCORS(c *call, e *s3err.Error) {
	if e.Status() >= 500 {
		return
	}
	p.addCORS(c)
}

// addCORS sets on c's answer the CORS headers the bucket's rules give an
// answer to c's request, when it is a cross-origin request that can have
// them. A lookup that fails leaves the answer as it was.
func (p *Proxy) addCORS(c *call) {
	ctx, cancel := context.WithTimeout(c.r.Context(), corsLookupTimeout)
	defer cancel()
	req, ok := corsLookupRequest(ctx, c)
	if !ok {
		return
	}
	resp, err := c.backend.send(req)
	if err != nil {
		p.log.Debug().Str("request_id", c.id).Err(err).Msg("CORS lookup failed")
		return
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBackendDocument))
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") == "" {
		return // no rule allows this origin and method: no CORS headers, as S3
	}
	h := c.w.Header()
	for _, name := range corsAnswerHeaders {
		if values := resp.Header.Values(name); len(values) > 0 {
			h[name] = append([]string(nil), values...)
		}
	}
}

// corsLookupRequest is the lookup for c's answer, if it needs one: a
// request with one Origin, for a bucket, with a method CORS rules name,
// that is not itself a preflight (whose answers are the store's).
func corsLookupRequest(ctx context.Context, c *call) (*http.Request, bool) {
	if c.backend == nil || c.target.Bucket == "" || c.r.Method == http.MethodOptions {
		return nil, false
	}
	origin := c.r.Header.Values("Origin")
	if len(origin) != 1 || origin[0] == "" {
		return nil, false
	}
	header := make(http.Header, 5) // these two, and the three the re-signer adds
	header.Set("Origin", origin[0])
	header.Set("Access-Control-Request-Method", c.r.Method)
	if operation.CheckPreflightHeaders(header) != nil || checkBackendBucket(c.backend, c.target.Bucket) != nil {
		return nil, false
	}
	return c.backend.newRequest(ctx, http.MethodOptions, c.target.Bucket, "", "", header), true
}

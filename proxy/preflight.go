package proxy

import (
	"io"
	"net/http"
	"strings"

	"github.com/s3cond/s3cond/s3err"
)

// CORS preflight. Before a cross-origin PUT or GET from a web page (a
// presigned upload, say) a browser sends OPTIONS to the same URL with
// Origin, Access-Control-Request-Method and Access-Control-Request-Headers,
// and never with credentials. S3 answers it from the bucket's CORS
// configuration: 200 with Access-Control-Allow-* headers, or 403. s3cond
// has no CORS configuration of its own: it asks the store, which holds the
// bucket's (PutBucketCors is forwarded like any bucket configuration).
//
// A preflight is the one request s3cond forwards without a client
// signature, re-signed with the store's key, so it forwards as little as
// S3 needs to answer it: OPTIONS on the bucket or object path, no query
// string, no body, and of the client's headers only the three above, each
// checked first. The store's answer comes back with only its CORS headers.

// preflightRequestHeaders are the only client headers a preflight forwards.
var preflightRequestHeaders = []string{"Origin", "Access-Control-Request-Method", "Access-Control-Request-Headers"}

// servePreflight answers an OPTIONS request, which route classified (or
// refused: routeErr) without its being signed.
func (p *Proxy) servePreflight(c *call, routeErr error) {
	if routeErr != nil {
		p.fail(c, routeErr)
		return
	}
	if c.r.ContentLength != 0 || len(c.r.TransferEncoding) > 0 {
		p.fail(c, s3err.Newf(s3err.InvalidRequest, "A CORS preflight request (OPTIONS) has no body."))
		return
	}
	if err := c.backend.KeyPolicy.Check(c.target.Key); err != nil {
		p.fail(c, err)
		return
	}
	resp, err := c.backend.send(preflightRequest(c))
	if err != nil {
		p.fail(c, backendError(err))
		return
	}
	defer resp.Body.Close()
	resp.Header = corsResponseHeader(resp.Header)
	if rewritesBackendBody(c, resp.StatusCode) {
		// The store's 403 (no CORS rule matched), NoSuchBucket, ...: its
		// error document, rewritten as for any other call.
		p.relayRewritten(c, resp)
		return
	}
	// S3's preflight answer has no body; whatever the store sent is not relayed.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBackendDocument))
	clientResponseHeader(c, c.w.Header(), resp.Header)
	c.w.Header().Set("Content-Length", "0")
	c.w.WriteHeader(resp.StatusCode)
}

// preflightRequest is the backend request for a preflight: OPTIONS on the
// store's path for the bucket and key, with no query, no body and only the
// client's preflight headers.
func preflightRequest(c *call) *http.Request {
	header := make(http.Header, len(preflightRequestHeaders)+3) // the re-signer adds three
	for _, name := range preflightRequestHeaders {
		if values := c.r.Header.Values(name); len(values) > 0 {
			header[name] = append([]string(nil), values...)
		}
	}
	return c.backend.newRequest(c.r.Context(), http.MethodOptions, c.target.Bucket, c.target.RawKey, "", header)
}

// corsResponseHeader keeps of a store's preflight answer only the CORS
// headers (Access-Control-*, Vary) and its request ID, which
// copyResponseHeader moves aside for s3cond's.
func corsResponseHeader(h http.Header) http.Header {
	kept := make(http.Header, 8)
	for name, values := range h {
		if strings.HasPrefix(name, "Access-Control-") || name == "Vary" || name == "X-Amz-Request-Id" {
			kept[name] = values
		}
	}
	return kept
}

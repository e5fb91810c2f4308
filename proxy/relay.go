package proxy

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/s3xml"
	"github.com/s3cond/s3cond/s3err"
)

// One rewriting path. Every answer of the backend reaches the client
// through relayAnswer (forward, ListBuckets' errors, a preflight's errors)
// or is s3cond's own document (DeleteObjects, POST Object): errors and
// CompleteMultipartUpload's result are read whole and rewritten
// (backenderror.go); a success names the client's bucket (listingname.go)
// and the client's identity instead of the backend principal
// (clientidentity.go), streaming; and every header set passes
// clientResponseHeader. No operation has a branch of its own, so none can
// relay what the store said about s3cond's request, key, host or buckets.

// dataAnswers are the calls whose successful body is the client's data or
// a document of its own (an object, a Select result, a JSON bucket
// policy), never rewritten. Every other successful body is an S3 document
// whose identities are renamed.
var dataAnswers = map[operation.Operation]bool{
	operation.GetObject: true, "SelectObjectContent": true, "GetObjectTorrent": true, "GetBucketPolicy": true,
}

// relayAnswer answers the client with the backend's response to c. held
// is the forwarded body's hold-back (nil: none); a small answer to a
// finished upload leaves in one write.
func (p *Proxy) relayAnswer(c *call, resp *http.Response, held *holdbackReader) {
	if rewritesBackendBody(c, resp.StatusCode) {
		p.relayRewritten(c, resp)
		return
	}
	renames := rewritesIdentities(c, resp)
	if backendName, ok := renamedBucket(c, resp); ok {
		p.relayRenamed(c, resp, backendName, renames)
		return
	}
	clientResponseHeader(c, c.w.Header(), resp.Header)
	if renames {
		p.relayIdentities(c, resp.StatusCode, resp.ContentLength, resp.Body)
		return
	}
	if held != nil && held.Complete() {
		// Read to its end: closing it spares net/http's server a drain of
		// nothing (an io.CopyN, and its allocation) as the answer starts.
		_ = c.r.Body.Close()
	}
	if conn := holdSmallAnswer(c, resp.ContentLength, held); conn != nil {
		defer releaseHeld(c, conn)
	}
	c.w.WriteHeader(resp.StatusCode)
	if c.r.Method != http.MethodHead {
		p.copyResponseBody(c, resp.Body)
	}
}

// rewritesIdentities reports whether a successful answer's body is a
// document that may name the backend principal.
func rewritesIdentities(c *call, resp *http.Response) bool {
	return len(c.backend.Identity) > 0 && c.r.Method != http.MethodHead && resp.ContentLength != 0 &&
		resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusNotModified && !dataAnswers[c.op]
}

// relayIdentities sends body, a document, with the client's identity in
// place of the backend principal's. A body of known small length is
// rewritten whole, so the answer keeps a Content-Length; a longer one (a
// listing) streams, chunked.
func (p *Proxy) relayIdentities(c *call, status int, length int64, body io.Reader) {
	h := c.w.Header()
	h.Del("Content-Md5") // of the backend's bytes, not these
	rename := toClientIdentity(c)
	if length > 0 && length <= maxBackendDocument {
		var out bytes.Buffer
		if err := s3xml.RewriteIdentities(&out, io.LimitReader(body, length), rename); err != nil {
			p.identityRewriteFailed(c, err)
			for name := range h {
				if name != requestIDHeader && name != hostIDHeader {
					delete(h, name) // the store's, for the answer that is not sent
				}
			}
			p.fail(c, unreadableDocument(err))
			return
		}
		h.Set("Content-Length", strconv.Itoa(out.Len()))
		c.w.WriteHeader(status)
		_, _ = c.w.Write(out.Bytes())
		return
	}
	h.Del("Content-Length")
	c.w.WriteHeader(status)
	if err := s3xml.RewriteIdentities(c.w, body, rename); err != nil {
		if errors.Is(err, c.r.Context().Err()) {
			panic(http.ErrAbortHandler)
		}
		p.identityRewriteFailed(c, err)
		// As copyResponseBody: a document cut short must not end cleanly.
		panic(http.ErrAbortHandler)
	}
}

// unreadableDocument is the client's answer when a backend document could
// not be read to be rewritten.
func unreadableDocument(err error) error {
	if errors.Is(err, s3xml.ErrIdentityDocument) {
		return s3err.Newf(s3err.BadGateway, "The backend storage answered with a document s3cond could not read.")
	}
	return backendError(err)
}

func (p *Proxy) identityRewriteFailed(c *call, err error) {
	p.log.Warn().Str("request_id", c.id).Str("backend", c.backend.Name).Err(err).
		Msg("the backend's document could not be rewritten for the client")
}

// clientResponseHeader is the backend's response header as the client
// sees it: copyResponseHeader's names and request ID, without the store's
// Server and x-amz-id-2 (s3cond's own stand in), and with the client's
// host and bucket names in Location and x-amz-bucket-arn.
func clientResponseHeader(c *call, dst, src http.Header) {
	copyResponseHeader(dst, src, c.id)
	clientLocation(c, dst)
	//lint:ignore SA1008 copyResponseHeader stores x-amz-* names in S3's lower case.
	if arn := dst[bucketARNHeader]; len(arn) > 0 {
		view := newClientView(c)
		mapped := make([]string, len(arn))
		for i, v := range arn {
			mapped[i] = view.scrub(v)
		}
		dst[bucketARNHeader] = mapped
	}
}

// bucketARNHeader is CreateBucket's and HeadBucket's x-amz-bucket-arn, as
// copyResponseHeader spells it.
const bucketARNHeader = "x-amz-bucket-arn"

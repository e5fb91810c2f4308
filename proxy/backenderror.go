package proxy

import (
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/s3xml"
	"github.com/s3cond/s3cond/s3err"
)

// maxBackendDocument bounds the backend answers s3cond reads whole (s3xml's
// bound for the documents it parses).
const maxBackendDocument = s3xml.MaxBackendDocument

// backendAuthFailures are the codes a backend gives when it refuses
// s3cond's own signature or credentials. The client's signature was
// verified already, so each is s3cond's fault (a re-signing bug, a wrong
// backend key, a clock off), and the document describes s3cond's backend
// request: its canonical request, string to sign and key ID.
var backendAuthFailures = map[string]bool{
	"SignatureDoesNotMatch":             true,
	"InvalidAccessKeyId":                true,
	"AuthorizationHeaderMalformed":      true,
	"AuthorizationQueryParametersError": true,
	"RequestTimeTooSkewed":              true,
	"XAmzContentSHA256Mismatch":         true,
	"IncompleteSignature":               true,
	"InvalidSignature":                  true,
	"InvalidSecurity":                   true,
	"InvalidToken":                      true,
	"ExpiredToken":                      true,
	"TokenRefreshRequired":              true,
	"MissingAuthenticationToken":        true,
	"SignatureVersionNotSupported":      true,
}

// harmlessDenials are AccessDenied messages that say why without naming
// a principal, key or policy, so the client may read them as the store
// wrote them (S3 and versitygw explain an object lock this way). Any other
// message is replaced by S3's plain one.
var harmlessDenials = map[string]bool{
	"Access Denied":  true,
	"Access Denied.": true,
	"Access Denied because object protected by object lock.": true,
}

// rewritesBackendBody reports whether forward must read the backend's
// answer whole and rewrite it before the client sees it: every error or
// redirect document (they name the backend's request, host and buckets),
// and CompleteMultipartUpload's result (its Location names the backend).
// Everything else streams untouched.
func rewritesBackendBody(c *call, status int) bool {
	if c.r.Method == http.MethodHead {
		return false // no body; the status and headers pass as they are
	}
	if status >= 300 && status != http.StatusNotModified {
		return true
	}
	return status == http.StatusOK && c.op == operation.CompleteMultipartUpload
}

// relayRewritten answers the client for a backend response that
// rewritesBackendBody selected: the document is read (bounded), rewritten
// to s3cond's request ID and the client's names, or replaced by s3cond's
// own error when it concerns s3cond's backend credentials or cannot be read.
func (p *Proxy) relayRewritten(c *call, resp *http.Response) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBackendDocument+1))
	switch {
	case err != nil:
		p.fail(c, backendError(err))
		return
	case len(body) > maxBackendDocument:
		p.logBackendAnswer(c, resp, s3xml.FlatDocument{}, "backend document too large to rewrite")
		p.fail(c, s3err.Newf(s3err.BadGateway, "The backend storage answered with a document s3cond could not read."))
		return
	case len(body) == 0:
		clientResponseHeader(c, c.w.Header(), resp.Header)
		c.w.WriteHeader(resp.StatusCode)
		return
	}
	doc, err := s3xml.ParseFlatDocument(body)
	if err != nil && resp.StatusCode == http.StatusOK {
		// A CompleteMultipartUpload result s3cond cannot parse: the object
		// is complete, so the answer stays a success, scrubbed of the host.
		p.writeDocument(c, resp, http.StatusOK, []byte(newClientView(c).scrub(string(body))))
		return
	}
	if err != nil || (doc.Root.Local != "Error" && resp.StatusCode >= 300) {
		p.logBackendAnswer(c, resp, doc, "backend answered with a document that is not an S3 error")
		p.relayUnreadable(c, resp)
		return
	}
	view := newClientView(c)
	if doc.Root.Local != "Error" {
		document := view.completeResult(doc).Render()
		if c.op == operation.CompleteMultipartUpload && resp.StatusCode == http.StatusOK {
			first, err := p.recordCompletion(c, resp.Header, document) // completion.go
			switch {
			case err != nil:
				p.fail(c, err)
				return
			case first != nil:
				p.replay(c, *first)
				return
			}
		}
		p.writeDocument(c, resp, resp.StatusCode, document)
		return
	}
	code := doc.Get("Code")
	if c.op == operation.CompleteMultipartUpload && p.replayCompletion(c) { // completion.go
		return
	}
	if backendAuthFailures[code] {
		p.logBackendAnswer(c, resp, doc, "the backend refused s3cond's signature or credentials")
		p.fail(c, s3err.New(s3err.InternalError))
		return
	}
	if code == string(s3err.AccessDenied) {
		// The store's policy for s3cond's key: the answer is the client's,
		// the details (which key, which policy) are not.
		p.logBackendAnswer(c, resp, doc, "the backend denied s3cond's request")
		e := s3err.New(s3err.AccessDenied)
		if msg := doc.Get("Message"); harmlessDenials[msg] {
			e.Message = msg
		}
		c.info.set(func(i *requestInfo) { i.err = e })
		p.writeDocument(c, resp, resp.StatusCode, e.XML(c.r.URL.Path, c.id))
		return
	}
	c.info.set(func(i *requestInfo) { i.err = &s3err.Error{Code: s3err.Code(code)} })
	p.writeDocument(c, resp, resp.StatusCode, view.errorDocument(doc).Render())
}

// relayUnreadable answers for a backend error whose body is not an S3
// error document (a bare net/http 431, a load balancer's HTML page). A
// server error becomes s3cond's 503 (kept, so clients retry) or 502; any
// other status is kept, with s3cond's document naming it.
func (p *Proxy) relayUnreadable(c *call, resp *http.Response) {
	switch {
	case resp.StatusCode == http.StatusServiceUnavailable:
		p.fail(c, s3err.Newf(s3err.ServiceUnavailable, "The backend storage is unavailable."))
		return
	case resp.StatusCode >= 500:
		p.fail(c, s3err.Newf(s3err.BadGateway, "The backend storage answered with status %d.", resp.StatusCode))
		return
	}
	text := http.StatusText(resp.StatusCode)
	code := strings.ReplaceAll(text, " ", "")
	if code == "" {
		code = "BackendError"
	}
	doc := s3xml.FlatDocument{Root: xml.Name{Local: "Error"}, Fields: []s3xml.Field{
		{Name: "Code", Value: code},
		{Name: "Message", Value: fmt.Sprintf("The backend storage answered with status %d (%s).", resp.StatusCode, text)},
		{Name: "Resource", Value: c.r.URL.Path},
		{Name: "RequestId", Value: c.id},
	}}
	c.info.set(func(i *requestInfo) { i.err = &s3err.Error{Code: s3err.Code(code)} })
	p.writeDocument(c, resp, resp.StatusCode, doc.Render())
}

// writeDocument sends the backend's status and headers with body, an XML
// document, as the new body, with s3cond's request ID.
func (p *Proxy) writeDocument(c *call, resp *http.Response, status int, body []byte) {
	h := c.w.Header()
	clientResponseHeader(c, h, resp.Header)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Content-Type", "application/xml")
	h.Del("Content-Md5") // of the backend's bytes, not these
	c.w.WriteHeader(status)
	_, _ = c.w.Write(body)
}

// logBackendAnswer records what the backend said, which the client does
// not see: its code, message and request ID. Never the body itself, which
// may carry s3cond's backend canonical request and key ID.
func (p *Proxy) logBackendAnswer(c *call, resp *http.Response, doc s3xml.FlatDocument, msg string) {
	p.log.Warn().Str("request_id", c.id).Str("backend", c.backend.Name).
		Int("backend_status", resp.StatusCode).
		Str("backend_code", doc.Get("Code")).
		Str("backend_message", newClientView(c).scrub(doc.Get("Message"))).
		Str("backend_request_id", firstNonEmpty(doc.Get("RequestId"), resp.Header.Get("X-Amz-Request-Id"))).
		Msg(msg)
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// clientLocation rewrites a Location header (CreateBucket's "/bucket", a
// redirect) to the client's host and bucket names.
func clientLocation(c *call, h http.Header) {
	if loc := h.Get("Location"); loc != "" {
		h.Set("Location", newClientView(c).scrub(loc))
	}
}

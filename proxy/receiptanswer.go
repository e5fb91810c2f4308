package proxy

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/precondition"
	"github.com/s3cond/s3cond/s3err"
)

// receiptTimeout bounds the lease-store requests of a receipt (recording a
// completion, reading one for a retry). They are detached from the client:
// the client that lost an answer has often hung up by the time its write
// committed, and its retry needs the record all the same.
const receiptTimeout = 5 * time.Second

// receiptOf makes a leased PutObject's or CopyObject's receipt from its
// answer (leasedwrite.Request.Receipt): nil when receipts are off or the
// call carries no invocation id. A completion is recorded on a row of its
// own (completion.go), whatever its condition.
func (p *Proxy) receiptOf(c *call) func(status int, header http.Header) string {
	if p.receipts == nil || (c.op != operation.PutObject && c.op != operation.CopyObject) ||
		invocationID(c.r) == "" || principal(c) == "" {
		return nil
	}
	if c.op == operation.CopyObject {
		c.copyAnswer = &capturedAnswer{}
	}
	return func(_ int, header http.Header) string {
		r := receipt{
			Op: c.op, Principal: principal(c), Invocation: invocationID(c.r), Content: requestContent(c),
			Header: answerHeader(header),
		}
		if c.op == operation.CopyObject {
			r.Document, r.ETag = copyResult(c.copyAnswer.body)
		} else {
			r.ETag = precondition.CanonicalETag(header.Get("ETag"))
		}
		if r.Content == "" || r.ETag == "" || r.ETag == `""` {
			return ""
		}
		return r.encode()
	}
}

// answerRetry answers a leased write whose condition failed with the
// answer its first attempt got, when the call is a retry of an attempt
// that committed (receipt.go); false when it is not, and err stands.
func (p *Proxy) answerRetry(c *call, receiptRow string, err error) bool {
	var e *s3err.Error
	if p.receipts == nil || !errors.As(err, &e) || e.Code != s3err.PreconditionFailed {
		return false
	}
	if c.op == operation.CompleteMultipartUpload {
		return p.replayCompletion(c)
	}
	if receiptRow == "" || invocationID(c.r) == "" || principal(c) == "" || firstAttempt(c.r) {
		return false
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.r.Context()), receiptTimeout)
	defer cancel()
	text, lookupErr := p.receipts.Receipt(ctx, c.backend.leasePath(c.target), receiptRow)
	r, ok := decodeReceipt(text)
	if lookupErr != nil || !ok || r.Op != c.op || r.Principal != principal(c) || r.Invocation != invocationID(c.r) {
		return false
	}
	// The receipt is the retry's own only if the retry sent the bytes its
	// first attempt wrote: its body is read to its end, verified against
	// the digest it declares, and compared. Where the key is now does not
	// matter: a receipt bound to this principal, invocation and content is
	// proof this very invocation committed, within the interval from its
	// first attempt to this answer, so 200 is linearizable even once other
	// writers moved the key on (and 412 then would tell a winner it lost).
	if c.auth != nil && c.auth.Body != nil {
		if _, err := io.Copy(io.Discard, c.auth.Body); err != nil {
			return false
		}
	}
	if requestContent(c) != r.Content {
		return false
	}
	p.replay(c, r)
	return true
}

// replay answers c with a recorded answer.
func (p *Proxy) replay(c *call, r receipt) {
	h := c.w.Header()
	for name, value := range r.Header {
		h.Set(name, value)
	}
	copyResponseHeader(h, http.Header{}, c.id)
	p.log.Debug().Str("request_id", c.id).Str("op", string(c.op)).Msg("a retry was given its first attempt's answer")
	if r.Document == "" {
		c.w.WriteHeader(http.StatusOK)
		return
	}
	h.Set("Content-Type", "application/xml")
	h.Set("Content-Length", strconv.Itoa(len(r.Document)))
	c.w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(c.w, r.Document)
}

// firstAttempt tells whether the SDK says this is an invocation's first
// attempt (amz-sdk-request: attempt=1; max=3, which botocore and the Go SDK
// send): it cannot be a retry of a write that committed, and its 412
// costs no lease-store read. A client that lies only changes its own
// answer.
func firstAttempt(r *http.Request) bool {
	for field := range strings.SplitSeq(r.Header.Get("Amz-Sdk-Request"), ";") {
		if strings.TrimSpace(field) == "attempt=1" {
			return true
		}
	}
	return false
}

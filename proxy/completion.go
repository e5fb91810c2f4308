package proxy

import (
	"context"
	"io"
	"net/http"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/s3xml"
	"github.com/s3cond/s3cond/precondition"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
	"github.com/s3cond/s3cond/s3err"
)

// A retried CompleteMultipartUpload of an upload that already completed
// succeeds on S3, with the first answer, even with If-None-Match: * (the
// object it completed is there). The stores s3cond fronts answer
// NoSuchUpload (the upload is gone), and a leased write's condition meets
// the object the completion wrote (412). So every completion that
// succeeded is recorded, before its answer leaves, on a row of its own in
// the lease store (dynamolease.Committer.PutReceipt: the fleet shares it,
// for the table's row TTL, lease.ttl, an hour by default, far beyond any
// SDK's retry window), bound to the key (the row's path), the upload ID
// (the row's name), the parts list as s3cond rewrote it and the principal.
// A Complete that fails (the store's NoSuchUpload, or s3rver's 500
// InternalError, for an upload it completed; a leased condition's 412)
// and matches a record is given the recorded answer, 200: the record is
// proof that this upload completed with these parts for this principal,
// and a first attempt never has one. One with another parts list or
// principal keeps its error. Only failing completions read the table.

// completionRow names a completion's receipt row.
func completionRow(c *call) string { return "complete " + c.query.Get("uploadId") }

// recordCompletion records a completion's answer, the document the client
// is about to be sent, before it is sent: a retry that reaches any s3cond
// once the answer may have left finds it. It returns the answer to send:
// the document, or the first answer when this completion is a retry the
// store answered 200 itself (versitygw does, without all of the first
// answer's checksum fields), or S3's NoSuchUpload when the upload was
// completed by another request. A failure to record costs retries the
// replay, not this answer.
func (p *Proxy) recordCompletion(c *call, header http.Header, document []byte) (first *receipt, err error) {
	if p.receipts == nil || principal(c) == "" || requestContent(c) == "" {
		return nil, nil
	}
	r := receipt{
		Op: operation.CompleteMultipartUpload, Principal: principal(c), Content: requestContent(c),
		Header: answerHeader(header), Document: string(document),
	}
	if doc, err := s3xml.ParseFlatDocument(document); err == nil {
		r.ETag = precondition.CanonicalETag(doc.Get("ETag"))
	}
	delete(r.Header, "ETag") // a completion's ETag is in its document
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.r.Context()), receiptTimeout)
	defer cancel()
	text, err := p.receipts.PutReceipt(ctx, c.backend.leasePath(c.target), completionRow(c), r.encode())
	if err != nil {
		p.log.Warn().Str("request_id", c.id).Err(err).
			Msg("a completion could not be recorded: a retry of it will get the store's answer")
		return nil, nil
	}
	earlier, ok := decodeReceipt(text)
	switch {
	case !ok:
		return nil, nil
	case sameCompletion(c, earlier):
		return &earlier, nil
	}
	// The upload was completed, by another principal or with other parts:
	// this is not a retry of that completion, whatever the store said
	// (versitygw answers 200 to any Complete of a completed upload).
	return nil, s3err.New(s3err.NoSuchUpload)
}

// sameCompletion tells whether a recorded completion is c's own: the same
// upload (the row's name) of the same key (the row's path), by the same
// principal, with the same parts.
func sameCompletion(c *call, r receipt) bool {
	return r.Op == operation.CompleteMultipartUpload && r.Principal == principal(c) &&
		r.Content == requestContent(c) && r.Document != ""
}

// replayCompletion answers a Complete that failed with
// the recorded answer of the same completion; false when there is none.
func (p *Proxy) replayCompletion(c *call) bool {
	if p.receipts == nil || principal(c) == "" || requestContent(c) == "" {
		return false
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.r.Context()), receiptTimeout)
	defer cancel()
	text, err := p.receipts.ReceiptRow(ctx, c.backend.leasePath(c.target), completionRow(c))
	r, ok := decodeReceipt(text)
	if err != nil || !ok || !sameCompletion(c, r) {
		return false
	}
	p.replay(c, r)
	return true
}

// capturedAnswer keeps the first bytes of an answer as it is relayed.
type capturedAnswer struct{ body []byte }

// capture is body, keeping what passes of it, up to what a receipt holds.
func (a *capturedAnswer) capture(body io.ReadCloser) io.ReadCloser {
	return capturingBody{ReadCloser: body, into: a}
}

type capturingBody struct {
	io.ReadCloser
	into *capturedAnswer
}

func (b capturingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if room := leasedwrite.MaxReceiptLength - len(b.into.body); room > 0 {
		b.into.body = append(b.into.body, p[:min(n, room)]...)
	}
	return n, err
}

// copyResult is a CopyObjectResult document as a receipt keeps it: only
// the fields S3 defines for it, rendered anew (whatever else the store's
// document held is not repeated), and its ETag; both empty for any other
// document (an error inside a 200, a document cut at the receipt's bound).
func copyResult(document []byte) (kept, etag string) {
	doc, err := s3xml.ParseFlatDocument(document)
	if err != nil || doc.Root.Local != "CopyObjectResult" || doc.Get("ETag") == "" {
		return "", ""
	}
	out := s3xml.FlatDocument{Root: doc.Root}
	for _, f := range doc.Fields {
		if copyResultFields[f.Name] {
			out.Fields = append(out.Fields, f)
		}
	}
	return string(out.Render()), precondition.CanonicalETag(doc.Get("ETag"))
}

var copyResultFields = map[string]bool{
	"ETag": true, "LastModified": true, "ChecksumType": true, "ChecksumCRC32": true, "ChecksumCRC32C": true,
	"ChecksumCRC64NVME": true, "ChecksumSHA1": true, "ChecksumSHA256": true,
}

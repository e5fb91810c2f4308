package proxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/s3cond/s3cond/internal/s3xml"
	"github.com/s3cond/s3cond/s3err"
)

// maxCopyParts is S3's limit of parts in an upload.
const maxCopyParts = 10_000

// partSize is the size of each UploadPartCopy range of a source of size
// bytes: PartSize, raised so that maxCopyParts cover it.
func (e CopyEmulation) partSize(size int64) int64 {
	part := e.PartSize
	if part <= 0 {
		part = defaultCopyEmulationSize
	}
	if least := (size + maxCopyParts - 1) / maxCopyParts; part < least {
		part = least
	}
	return part
}

// copyByParts copies a large source on the store: CreateMultipartUpload
// with the new object's headers, UploadPartCopy of each range (each on
// the condition that the source still has the ETag the GET saw), and a
// CompleteMultipartUpload carrying the store condition. The copy's ETag
// is then a multipart ETag (docs/spec.md). Any failure aborts the upload:
// none is left behind.
func (p *Proxy) copyByParts(c *call, src copySourceRead, storeCond http.Header) {
	h, err := c.backend.destinationHeader(c, src.resp.Header)
	if err != nil {
		p.fail(c, err)
		return
	}
	uploadID, err := c.backend.createCopyUpload(c.r.Context(), c, h)
	if err != nil {
		p.fail(c, err)
		return
	}
	resp, etag, err := c.backend.assembleCopy(c, src, uploadID, storeCond)
	if err != nil || resp.StatusCode != http.StatusOK {
		// Aborted before the client hears of it: once it has its answer,
		// no upload of this copy is left.
		p.abortCopyUpload(c, uploadID)
	}
	switch {
	case err != nil:
		p.fail(c, err)
	case resp.StatusCode != http.StatusOK:
		p.relayAnswer(c, resp, nil) // the store's 412: the condition failed
	default:
		p.answerCopy(c, src, resp.Header, etag)
	}
}

// assembleCopy copies the parts into the upload and completes it.
func (b *Backend) assembleCopy(c *call, src copySourceRead, uploadID string, storeCond http.Header) (*http.Response, string, error) {
	parts, err := b.copyParts(c, src, uploadID)
	if err != nil {
		return nil, "", err
	}
	return b.completeCopyUpload(c.r.Context(), c, uploadID, parts, storeCond)
}

// copyRequest sends one request of an emulated copy's (or an append's,
// append_multipart.go) upload under ctx and reads its
// answer's document whole (they are small: bounded by
// s3xml.MaxBackendDocument). A 200 carrying an <Error> (S3 may answer so
// once it has begun) is a failure.
func (b *Backend) copyRequest(ctx context.Context, c *call, method, rawQuery string, h http.Header, body []byte) (*http.Response, s3xml.FlatDocument, error) {
	req := b.newRequest(ctx, method, c.target.Bucket, c.target.RawKey, rawQuery, h)
	if body != nil {
		req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	}
	resp, err := b.send(req)
	if err != nil {
		return nil, s3xml.FlatDocument{}, backendError(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, s3xml.MaxBackendDocument+1))
	if err != nil {
		return nil, s3xml.FlatDocument{}, backendError(err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	if resp.StatusCode != http.StatusOK {
		return resp, s3xml.FlatDocument{}, nil
	}
	doc, err := s3xml.ParseFlatDocument(data)
	if err != nil {
		return nil, doc, s3err.Wrap(s3err.BadGateway, err)
	}
	if doc.Root.Local == "Error" {
		return nil, doc, s3err.Newf(s3err.BadGateway, "The backend answered %s %s with an error: %s.", method, rawQuery, doc.Get("Code"))
	}
	return resp, doc, nil
}

// createCopyUpload begins the upload the copy is assembled in.
func (b *Backend) createCopyUpload(ctx context.Context, c *call, h http.Header) (string, error) {
	resp, doc, err := b.copyRequest(ctx, c, http.MethodPost, "uploads", h.Clone(), nil)
	switch {
	case err != nil:
		return "", err
	case resp.StatusCode != http.StatusOK:
		return "", s3err.Newf(s3err.BadGateway, "The backend answered CreateMultipartUpload with status %d.", resp.StatusCode)
	case doc.Get("UploadId") == "":
		return "", s3err.Newf(s3err.BadGateway, "The backend's CreateMultipartUpload named no upload.")
	}
	return doc.Get("UploadId"), nil
}

// partCopyHeaderNames are a CopyObject's headers that each UploadPartCopy
// of its emulation takes as they are: the source's SSE-C key and owner,
// the destination's SSE-C key and owner.
var partCopyHeaderNames = []string{"X-Amz-Copy-Source-Server-Side-Encryption-Customer-Algorithm",
	"X-Amz-Copy-Source-Server-Side-Encryption-Customer-Key", "X-Amz-Copy-Source-Server-Side-Encryption-Customer-Key-Md5",
	"X-Amz-Server-Side-Encryption-Customer-Algorithm", "X-Amz-Server-Side-Encryption-Customer-Key",
	"X-Amz-Server-Side-Encryption-Customer-Key-Md5", "X-Amz-Source-Expected-Bucket-Owner",
	"X-Amz-Expected-Bucket-Owner", "X-Amz-Request-Payer"}

// copyParts copies the source range by range into the upload, each range
// on the condition that the source still has the ETag its GET answered
// (the parts are then all of one version of it).
func (b *Backend) copyParts(c *call, src copySourceRead, uploadID string) ([]s3xml.CompletePart, error) {
	size := src.resp.ContentLength
	step := b.CopyEmulation.partSize(size)
	base := make(http.Header, len(partCopyHeaderNames)+3)
	for _, name := range partCopyHeaderNames {
		if v, ok := c.r.Header[name]; ok {
			base[name] = v
		}
	}
	base.Set("X-Amz-Copy-Source", c.copySource.header(b))
	if src.etag != "" {
		base.Set("X-Amz-Copy-Source-If-Match", src.etag)
	}
	var parts []s3xml.CompletePart
	for start, n := int64(0), 1; start < size; start, n = start+step, n+1 {
		h := base.Clone()
		h.Set("X-Amz-Copy-Source-Range", fmt.Sprintf("bytes=%d-%d", start, min(start+step, size)-1))
		query := "partNumber=" + strconv.Itoa(n) + "&uploadId=" + strictEscape(uploadID)
		resp, doc, err := b.copyRequest(c.r.Context(), c, http.MethodPut, query, h, nil)
		switch {
		case err != nil:
			return nil, err
		case resp.StatusCode == http.StatusPreconditionFailed:
			return nil, s3err.Precondition("x-amz-copy-source-if-match") // the source changed meanwhile
		case resp.StatusCode != http.StatusOK:
			return nil, s3err.Newf(s3err.BadGateway, "The backend answered UploadPartCopy with status %d.", resp.StatusCode)
		case doc.Get("ETag") == "":
			return nil, s3err.Newf(s3err.BadGateway, "The backend's UploadPartCopy gave no ETag.")
		}
		parts = append(parts, s3xml.CompletePart{PartNumber: n, ETag: doc.Get("ETag")})
	}
	return parts, nil
}

// completeCopyUpload completes the upload under the store condition; a
// non-200 answer is returned to be relayed.
func (b *Backend) completeCopyUpload(ctx context.Context, c *call, uploadID string, parts []s3xml.CompletePart, storeCond http.Header) (*http.Response, string, error) {
	h := storeCond.Clone()
	for _, name := range []string{"X-Amz-Expected-Bucket-Owner", "X-Amz-Request-Payer", "X-Amz-Server-Side-Encryption-Customer-Algorithm", "X-Amz-Server-Side-Encryption-Customer-Key", "X-Amz-Server-Side-Encryption-Customer-Key-Md5"} {
		if v, ok := c.r.Header[name]; ok {
			h[name] = v
		}
	}
	body := (&s3xml.CompleteRequest{Parts: parts}).Marshal()
	resp, doc, err := b.copyRequest(ctx, c, http.MethodPost, "uploadId="+strictEscape(uploadID), h, body)
	if err != nil {
		return nil, "", err
	}
	return resp, doc.Get("ETag"), nil
}

// abortCopyUpload aborts an emulated copy's upload, even when its client
// hung up; an abort that fails is logged (the store's lifecycle rule for
// incomplete uploads is then what removes it).
func (p *Proxy) abortCopyUpload(c *call, uploadID string) {
	ctx, cancel := abortContext(c)
	defer cancel()
	req := c.backend.newRequest(ctx, http.MethodDelete, c.target.Bucket, c.target.RawKey, "uploadId="+strictEscape(uploadID), nil)
	resp, err := c.backend.send(req)
	if err == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, s3xml.MaxBackendDocument))
		resp.Body.Close()
		if resp.StatusCode < 300 || resp.StatusCode == http.StatusNotFound {
			return
		}
		err = fmt.Errorf("status %d", resp.StatusCode)
	}
	p.log.Warn().Str("request_id", c.id).Str("backend", c.backend.Name).Str("upload_id", uploadID).Err(err).
		Msg("could not abort the multipart upload of an emulated copy or an append; it is left to the store's lifecycle rules")
}

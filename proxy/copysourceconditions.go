package proxy

import (
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/precondition"
	"github.com/s3cond/s3cond/s3err"
)

// checkCopySourceConditions evaluates a CopyObject's or UploadPartCopy's
// x-amz-copy-source-if-* headers against a HEAD of the source, since many
// stores ignore them. The headers are forwarded too: a store that honours
// them also closes the window between this HEAD and its copy, which a lease
// of the destination cannot (the source is another key).
func (p *Proxy) checkCopySourceConditions(c *call) error {
	if c.op != operation.CopyObject && c.op != operation.UploadPartCopy || !precondition.HasCopySourceConditions(c.r.Header) {
		return nil
	}
	src := c.copySource // parsed and checked by admit
	if src == nil {
		return nil
	}
	rawQuery := ""
	if src.versionID != "" {
		rawQuery = "versionId=" + strictEscape(src.versionID)
	}
	etag, modified, err := c.backend.headSource(c.r.Context(), src.bucket, escapeKey(src.key), rawQuery)
	if err != nil {
		return err
	}
	if failed := precondition.EvaluateCopySource(c.r.Header, etag, modified); failed != "" {
		return s3err.Precondition(strings.ToLower(failed))
	}
	return nil
}

// headSource reads a copy source's ETag and Last-Modified; a missing
// source is S3's 404 NoSuchKey, as the copy itself would answer.
func (b *Backend) headSource(ctx context.Context, bucket, rawKey, rawQuery string) (etag, lastModified string, err error) {
	resp, err := b.send(b.newRequest(ctx, http.MethodHead, bucket, rawKey, rawQuery, nil))
	if err != nil {
		return "", "", backendError(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		return resp.Header.Get("ETag"), resp.Header.Get("Last-Modified"), nil
	case http.StatusNotFound:
		return "", "", s3err.New(s3err.NoSuchKey)
	case http.StatusForbidden:
		return "", "", s3err.Newf(s3err.AccessDenied, "The backend refused s3cond's HEAD of the copy source.")
	}
	return "", "", s3err.Newf(s3err.BadGateway, "The backend answered HEAD of the copy source with status %d.", resp.StatusCode)
}

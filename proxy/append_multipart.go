package proxy

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/s3xml"
	"github.com/s3cond/s3cond/precondition"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
	"github.com/s3cond/s3cond/s3err"
)

// errPartCopyRefused: the store answered UploadPartCopy with 501 (s3rver):
// the append rewrites the object instead.
var errPartCopyRefused = errors.New("the store does not implement UploadPartCopy")

// copyRange is one UploadPartCopy range of the existing object, its last
// byte included.
type copyRange struct{ first, last int64 }

// appendCopyRanges splits an existing object of size bytes into the
// UploadPartCopy ranges of an append: each of at least part bytes (S3
// refuses a part under 5 MiB that is not the last, and the appended part
// comes last), the remainder joined to the last range, and at most
// maxObjectParts-1 of them, leaving room for the appended part. A range
// stays under S3's 5 GiB UploadPartCopy limit: with 9,999 ranges of a
// 5 TiB object each is under 550 MiB, the last under twice that.
func appendCopyRanges(size, part int64) []copyRange {
	if least := (size + maxObjectParts - 2) / (maxObjectParts - 1); part < least {
		part = least
	}
	n := max(size/part, 1)
	ranges := make([]copyRange, n)
	for i := range n {
		ranges[i] = copyRange{first: i * part, last: (i+1)*part - 1}
	}
	ranges[n-1].last = size - 1
	return ranges
}

// byParts appends to a large object on the store: CreateMultipartUpload
// with the object's metadata, UploadPartCopy of its ranges (each on the
// condition that it is still the version extended), UploadPart of the
// client's bytes, and, once the lease allows it, CompleteMultipartUpload.
// The object's bytes never pass through s3cond, and until the completion
// nothing is visible. Any failure aborts the upload. The result has a
// multipart ETag.
func (s *appendSender) byParts(g leasedwrite.Guard, pinned precondition.ObjectState) bool {
	c := s.c
	head, uploadID, ok := s.beginAppendUpload(g, http.MethodHead, pinned)
	if !ok {
		return false
	}
	head.Body.Close()
	parts, err := s.uploadAppendParts(g, pinned, uploadID)
	if err == nil {
		err = g.BeforeFinalByte() // the lease and its re-check
	}
	if err != nil {
		s.p.abortCopyUpload(c, uploadID)
		if errors.Is(err, errPartCopyRefused) {
			c.backend.partCopyRefused.Store(true)
			s.p.log.Warn().Str("backend", c.backend.Name).
				Msg("the backend does not implement UploadPartCopy: appends to large objects rewrite them through s3cond")
			return s.rewrite(g, pinned)
		}
		s.Fail(err)
		return false
	}
	return s.completeAppend(g, uploadID, parts, pinned)
}

// beginAppendUpload reads the object extended (method GET or HEAD, on the
// pinned version) and begins the upload its appended version is built in,
// with its metadata; on failure it has answered the client (ok false).
// The caller closes the read's body.
func (s *appendSender) beginAppendUpload(g leasedwrite.Guard, method string, pinned precondition.ObjectState) (read *http.Response, uploadID string, ok bool) {
	read, err := s.existingRead(g, method, pinned)
	if err != nil {
		s.Fail(err)
		return nil, "", false
	}
	h, err := s.appendedHeader(g, read.Header)
	if err == nil {
		uploadID, err = s.c.backend.createCopyUpload(g.Ctx, s.c, h)
	}
	if err != nil {
		read.Body.Close()
		s.Fail(err)
		return nil, "", false
	}
	return read, uploadID, true
}

// completeAppend completes an append's upload, on the store condition,
// and answers; an upload that did not complete is aborted.
func (s *appendSender) completeAppend(g leasedwrite.Guard, uploadID string, parts []s3xml.CompletePart, pinned precondition.ObjectState) bool {
	c := s.c
	resp, etag, err := c.backend.completeCopyUpload(g.Ctx, c, uploadID, parts, s.storeCondition(operation.CompleteMultipartUpload, pinned))
	if err != nil || resp.StatusCode != http.StatusOK {
		s.p.abortCopyUpload(c, uploadID)
	}
	if err != nil {
		s.Fail(err)
		return false
	}
	return s.finish(g, resp, etag)
}

// uploadAppendParts copies the existing object's ranges into the upload
// and uploads the client's bytes as its last part.
func (s *appendSender) uploadAppendParts(g leasedwrite.Guard, pinned precondition.ObjectState, uploadID string) ([]s3xml.CompletePart, error) {
	c := s.c
	base := http.Header{
		"X-Amz-Copy-Source":          {copySource{bucket: c.target.Bucket, key: c.target.Key}.header(c.backend)},
		"X-Amz-Copy-Source-If-Match": {pinned.ETag},
	}
	ranges := appendCopyRanges(s.offset, appendPartSize)
	parts := make([]s3xml.CompletePart, 0, len(ranges)+1)
	for i, r := range ranges {
		h := base.Clone()
		h.Set("X-Amz-Copy-Source-Range", fmt.Sprintf("bytes=%d-%d", r.first, r.last))
		query := "partNumber=" + strconv.Itoa(i+1) + "&uploadId=" + strictEscape(uploadID)
		resp, doc, err := c.backend.copyRequest(g.Ctx, c, http.MethodPut, query, h, nil)
		switch {
		case err != nil:
			return nil, err
		case resp.StatusCode == http.StatusNotImplemented && i == 0:
			return nil, errPartCopyRefused
		case resp.StatusCode == http.StatusPreconditionFailed:
			return nil, s.p.refusedConflict(c, s.cond) // the object changed meanwhile
		case resp.StatusCode != http.StatusOK:
			return nil, s3err.Newf(s3err.BadGateway, "The backend answered UploadPartCopy with status %d.", resp.StatusCode)
		case doc.Get("ETag") == "":
			return nil, s3err.Newf(s3err.BadGateway, "The backend's UploadPartCopy gave no ETag.")
		}
		parts = append(parts, s3xml.CompletePart{PartNumber: i + 1, ETag: doc.Get("ETag")})
	}
	if s.length == 0 {
		return parts, nil // an empty append adds no part
	}
	etag, err := s.uploadAppendedPart(g, uploadID, len(parts)+1, s.body, s.length)
	if err != nil {
		return nil, err
	}
	return append(parts, s3xml.CompletePart{PartNumber: len(parts) + 1, ETag: etag}), nil
}

// uploadAppendedPart uploads length bytes of body, streamed and verified
// as they go, as part n: a body that fails verification fails the part.
func (s *appendSender) uploadAppendedPart(g leasedwrite.Guard, uploadID string, n int, body io.Reader, length int64) (string, error) {
	c := s.c
	query := "partNumber=" + strconv.Itoa(n) + "&uploadId=" + strictEscape(uploadID)
	h := http.Header{"X-Amz-Content-Sha256": {"UNSIGNED-PAYLOAD"}}
	req := c.backend.newRequest(g.Ctx, http.MethodPut, c.target.Bucket, c.target.RawKey, query, h)
	out := newOutboundBody(body, c.info, nil)
	req.Body, req.ContentLength = out, length
	resp, err := c.backend.send(req)
	if out.Err() != nil {
		if err == nil {
			resp.Body.Close()
		}
		return "", out.Err()
	}
	if err != nil {
		return "", backendError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") == "" {
		return "", s3err.Newf(s3err.BadGateway, "The backend answered UploadPart of the appended bytes with status %d.", resp.StatusCode)
	}
	return resp.Header.Get("ETag"), nil
}

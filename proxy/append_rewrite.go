package proxy

import (
	"bytes"
	"io"
	"net/http"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/precondition"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
	"github.com/s3cond/s3cond/s3err"
)

// rewrite appends to a small object (at most appendBufferedLimit) by
// replacing it with one PutObject of its bytes followed by the client's.
// Its bytes are read whole first: a store that writes in place (s3rver)
// truncates the object as the PutObject begins, and a GET streaming it
// into that same PutObject was cut short. The client's bytes stream, their
// final byte held back until they verified (Content-MD5, x-amz-checksum-*)
// and the lease allows it (the guard's gate): a body that fails, or a lease
// lost, aborts the request and the object is left as it was. A larger
// object goes through a multipart upload (rewriteByUpload, byParts).
func (s *appendSender) rewrite(g leasedwrite.Guard, pinned precondition.ObjectState) bool {
	c := s.c
	if s.offset > appendBufferedLimit {
		return s.rewriteByUpload(g, pinned) // append_inplace.go
	}
	total := s.offset + s.length
	get, err := s.existingRead(g, http.MethodGet, pinned)
	if err != nil {
		s.Fail(err)
		return false
	}
	existing, err := readWhole(get.Body, s.offset)
	get.Body.Close()
	if err != nil {
		s.Fail(s3err.Wrap(s3err.BadGateway, err))
		return false
	}
	h, err := s.appendedHeader(g, get.Header)
	if err != nil {
		s.Fail(err)
		return false
	}
	for name, values := range s.storeCondition(operation.PutObject, pinned) {
		h[name] = values
	}
	h.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	req := c.backend.newRequest(g.Ctx, http.MethodPut, c.target.Bucket, c.target.RawKey, "", h)
	var held *holdbackReader
	if total == 0 {
		// An empty append to an empty object: nothing to hold back.
		if err := g.BeforeFinalByte(); err != nil {
			s.Fail(err)
			return false
		}
		req.Body = http.NoBody
	} else {
		body := newOutboundBody(io.MultiReader(bytes.NewReader(existing), s.body), c.info, g.BeforeFinalByte)
		held, req.Body, req.ContentLength = &body.holdbackReader, body, total
	}
	resp, err := c.backend.send(req)
	if held != nil && held.Err() != nil {
		// The client's bytes failed verification, or the gate refused: the
		// request was aborted before its final byte.
		if err == nil {
			resp.Body.Close()
		}
		s.Fail(held.Err())
		return false
	}
	if err != nil {
		s.Fail(backendError(err))
		return false
	}
	defer resp.Body.Close()
	return s.finish(g, resp, resp.Header.Get("ETag"))
}

package proxy

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/s3xml"
	"github.com/s3cond/s3cond/precondition"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
	"github.com/s3cond/s3cond/s3err"
)

// appendSinglePutLimit is the largest existing object whose bytes an
// append passes through s3cond (append_rewrite.go, append_inplace.go); a
// larger one is copied on the store (append_multipart.go). The emulated
// copy's default, for the same reason: below it the extra round trips of
// UploadPartCopy cost more than the bytes. It is above S3's 5 MiB minimum
// part, which every copied range but the appended one must meet.
const appendSinglePutLimit = defaultCopyEmulationSize

// appendBufferedLimit is the largest existing object an append reads whole
// and rewrites with a PutObject (append_rewrite.go): the memory one append
// holds. Larger ones up to appendSinglePutLimit stream through a one-part
// multipart upload (append_inplace.go).
const appendBufferedLimit = 1 << 20

// appendPartSize is the least size of an UploadPartCopy range of the
// existing object; the remainder joins the last range.
const appendPartSize = defaultCopyEmulationSize

// objectSizeHeader is S3's answer to an append: the object's new size.
const objectSizeHeader = "x-amz-object-size"

// appendSender runs one append's store writes (leasedwrite.Sender): the
// version it extends is the condition's pinned state, read before any
// write is sent.
type appendSender struct {
	p      *Proxy
	c      *call
	cond   *appendCondition
	offset int64
	mode   leasedwrite.Mode
	// body is the client's verified, decoded body (the appended bytes),
	// length long; buffered when small (BufferBody).
	body     io.Reader
	length   int64
	buffered []byte
}

func (s *appendSender) BodyLength() int64 { return s.length }

func (s *appendSender) BufferBody() error {
	body, err := readWhole(s.body, s.length)
	if err != nil {
		return err
	}
	s.buffered, s.body = body, bytes.NewReader(body)
	return nil
}

func (s *appendSender) Fail(err error) { s.p.fail(s.c, err) }

// Send writes the append: a create where no object is, a rewrite of a
// small one, an assembly on the store of a large one. It reports whether
// the final write's answer was read in full.
func (s *appendSender) Send(g leasedwrite.Guard) bool {
	if g.Ctx == nil {
		g.Ctx = s.c.r.Context()
	}
	if g.BeforeFinalByte == nil {
		// Lease-free (appendLeaseFree): nothing to wait for.
		g.BeforeFinalByte = func() error { return nil }
	}
	pinned := s.cond.pinnedState()
	switch {
	case !pinned.Exists:
		return s.create(g)
	case s.offset > appendSinglePutLimit && !s.c.backend.partCopyRefused.Load():
		return s.byParts(g, pinned)
	default:
		return s.rewrite(g, pinned)
	}
}

// create writes a new object (offset 0, no object): the client's PutObject
// as it is, without the offset header (a store that knows it needs none,
// and one that does not must not see it), guarded as a create.
func (s *appendSender) create(g leasedwrite.Guard) bool {
	c := s.c
	spec := s.p.clientBody(c)
	if s.buffered != nil {
		spec = forwardSpec{body: bytes.NewReader(s.buffered), length: int64(len(s.buffered))}
	}
	header := http.Header{headerWriteOffset: nil}
	for name, values := range spec.header {
		header[name] = values
	}
	spec.header = header
	g.StoreCondition = s.storeCondition(operation.PutObject, precondition.ObjectState{})
	success := g.BeforeSuccess
	g.BeforeSuccess = func() error {
		if success != nil {
			if err := success(); err != nil {
				return err
			}
		}
		// Under S3's spelling, the key the store's own answer (versitygw
		// sends one) is relayed under: one header, not two.
		c.w.Header()[objectSizeHeader] = []string{strconv.FormatInt(s.length, 10)}
		return nil
	}
	spec.guard = g
	res := s.p.forward(c.detached(), spec)
	_ = http.NewResponseController(c.w).Flush()
	if g.Answered != nil && res.status != 0 {
		g.Answered(res.status, res.header)
	}
	return res.status != 0
}

// storeCondition is the condition the final write of an append carries to
// the store: If-Match on the version extended, If-None-Match: * for a
// create. Always on a store served natively (its check is what makes the
// append atomic); under a lease only where the store checks it right
// (leasedwrite.StoreChecks), so a write that lands late fails there.
func (s *appendSender) storeCondition(op operation.Operation, pinned precondition.ObjectState) http.Header {
	native := !s.mode.Leases()
	switch {
	case !pinned.Exists && (native || s.mode.Checks.IfNoneMatch[op]):
		return http.Header{precondition.HeaderIfNoneMatch: {"*"}}
	case pinned.Exists && (native || s.mode.Checks.IfMatch[op]):
		return http.Header{precondition.HeaderIfMatch: {pinned.ETag}}
	}
	return nil
}

// finish answers the final write's answer resp: the store's refusal of its
// condition as the append's conflict, another failure as the store gave
// it, a success as S3 answers an append (the ETag, the object's new size).
func (s *appendSender) finish(g leasedwrite.Guard, resp *http.Response, etag string) bool {
	c := s.c
	switch {
	case resp.StatusCode == http.StatusPreconditionFailed:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, s3xml.MaxBackendDocument))
		s.Fail(s.p.refusedConflict(c, s.cond))
		return true
	case resp.StatusCode != http.StatusOK:
		s.p.relayAnswer(c, resp, nil)
		return true
	}
	if g.BeforeSuccess != nil {
		if err := g.BeforeSuccess(); err != nil {
			s.Fail(err)
			return false
		}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, s3xml.MaxBackendDocument))
	out := c.w.Header()
	for name, values := range resp.Header {
		if strings.HasPrefix(name, "X-Amz-Server-Side-Encryption") || name == "X-Amz-Version-Id" {
			out[s3ResponseName(name)] = values
		}
	}
	out.Set("ETag", etag)
	out[objectSizeHeader] = []string{strconv.FormatInt(s.offset+s.length, 10)}
	out.Set("Content-Length", "0")
	c.w.WriteHeader(http.StatusOK)
	if g.Answered != nil {
		g.Answered(http.StatusOK, http.Header{"Etag": {etag}})
	}
	return true
}

// appendKeptHeaders are the existing object's headers an append keeps, as
// S3 keeps them (an append changes the bytes, not the object): besides
// objectMetadataHeaders and x-amz-meta-*.
var appendKeptHeaders = []string{"X-Amz-Storage-Class", "X-Amz-Website-Redirect-Location",
	"X-Amz-Server-Side-Encryption", "X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id",
	"X-Amz-Server-Side-Encryption-Bucket-Key-Enabled"}

// appendedHeader is the header of the write that replaces the object with
// its appended self: the existing object's metadata, system headers and
// tags (from its GET or HEAD), and the client's bucket-owner checks.
func (s *appendSender) appendedHeader(g leasedwrite.Guard, existing http.Header) (http.Header, error) {
	h := make(http.Header, 12)
	for _, names := range [][]string{objectMetadataHeaders, appendKeptHeaders} {
		for _, name := range names {
			if v, ok := existing[name]; ok {
				h[name] = append([]string(nil), v...)
			}
		}
	}
	for name, values := range existing {
		if strings.HasPrefix(name, "X-Amz-Meta-") {
			h[name] = append([]string(nil), values...)
		}
	}
	if strings.EqualFold(h.Get("X-Amz-Storage-Class"), "STANDARD") {
		h.Del("X-Amz-Storage-Class")
	}
	for _, name := range []string{"X-Amz-Expected-Bucket-Owner", "X-Amz-Request-Payer"} {
		if v, ok := s.c.r.Header[name]; ok {
			h[name] = v
		}
	}
	tags, err := s.appendTags(g, existing) // append_tags.go
	if err != nil {
		return nil, err
	}
	if tags != "" {
		h.Set("X-Amz-Tagging", tags)
	}
	return h, nil
}

// existingRead is a read of the version an append extends: GET (its bytes)
// or HEAD (its headers), on the condition that it is still that version,
// and checked to be it. A read that finds another is the append's
// conflict (refusedConflict).
func (s *appendSender) existingRead(g leasedwrite.Guard, method string, pinned precondition.ObjectState) (*http.Response, error) {
	c := s.c
	h := http.Header{precondition.HeaderIfMatch: {pinned.ETag}}
	for _, name := range []string{"X-Amz-Expected-Bucket-Owner", "X-Amz-Request-Payer"} {
		if v, ok := c.r.Header[name]; ok {
			h[name] = v
		}
	}
	resp, err := c.backend.send(c.backend.newRequest(g.Ctx, method, c.target.Bucket, c.target.RawKey, "", h))
	if err != nil {
		return nil, backendError(err)
	}
	switch {
	case resp.StatusCode == http.StatusPreconditionFailed || resp.StatusCode == http.StatusNotFound,
		resp.StatusCode == http.StatusOK && (resp.ContentLength != s.offset || !precondition.ETagsEqual(resp.Header.Get("ETag"), pinned.ETag)):
		resp.Body.Close()
		return nil, s.p.refusedConflict(c, s.cond)
	case resp.StatusCode != http.StatusOK:
		resp.Body.Close()
		return nil, s3err.Newf(s3err.BadGateway, "The backend answered %s of the object appended to with status %d.", method, resp.StatusCode)
	}
	return resp, nil
}

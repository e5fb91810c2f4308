package proxy

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/s3cond/s3cond/internal/s3xml"
	"github.com/s3cond/s3cond/precondition"
	"github.com/s3cond/s3cond/s3err"
)

// A conditional CopyObject on a store that ignores a copy's destination
// conditions but checks PutObject's and CompleteMultipartUpload's
// atomically (versitygw v1.8.0) is rebuilt from those writes
// (leasedwrite.Mode.EmulateCopy): the store's own check on the final
// write makes the whole atomic, with no lease. A source up to
// CopyEmulation.SinglePutLimit is read with a GET and streamed into a
// conditional PutObject (emulatedcopy.go); a larger one is copied on the
// store by UploadPartCopy ranges and a conditional
// CompleteMultipartUpload (emulatedcopy_multipart.go).

// CopyEmulation tunes an emulated conditional copy; the zero value is the
// defaults.
type CopyEmulation struct {
	// SinglePutLimit is the largest source copied by GET and PutObject
	// (its bytes pass through s3cond, streamed: memory does not grow with
	// it); larger ones are copied on the store, part by part. 0: 8 MiB.
	SinglePutLimit int64
	// PartSize is the size of an UploadPartCopy range (the last may be
	// shorter); raised where 10 000 parts would not cover the source.
	// 0: 8 MiB.
	PartSize int64
}

// defaultCopyEmulationSize is both defaults: 8 MiB is the AWS CLI's and
// SDK transfer managers' multipart threshold and part size, so a copy
// that a client's own tools would do in one request keeps the single
// MD5 ETag, and beyond it the bytes that would cross s3cond twice cost
// more than the three extra round trips of a copy on the store.
const defaultCopyEmulationSize = 8 << 20

// maxCopySource is S3's largest CopyObject source (5 GiB): a larger one is
// refused, as S3 refuses it, whichever way the copy would be done.
const maxCopySource = 5 << 30

func (e CopyEmulation) singlePutLimit() int64 {
	if e.SinglePutLimit > 0 {
		return e.SinglePutLimit
	}
	return defaultCopyEmulationSize
}

// emulateCopy serves c, a CopyObject with destination conditions conds,
// by the store's conditional writes (conds include what the bucket's write
// policy added, writepolicy.go).
func (p *Proxy) emulateCopy(c *call, conds precondition.Conditions) {
	if c.copySource == nil {
		p.fail(c, s3err.Newf(s3err.InternalError, "A copy without a checked source reached the emulated copy."))
		return
	}
	if _, ok := c.r.Header["X-Amz-Checksum-Algorithm"]; ok {
		p.fail(c, s3err.Newf(s3err.NotImplemented, "x-amz-checksum-algorithm is not implemented for a conditional CopyObject on this store (s3cond builds it from PutObject, docs/spec.md)."))
		return
	}
	storeCond, err := p.copyStoreCondition(c, conds)
	if err != nil {
		p.fail(c, err)
		return
	}
	src, err := c.backend.openCopySource(c)
	if err != nil {
		p.fail(c, err)
		return
	}
	if src.failed != nil {
		defer src.failed.Body.Close()
		p.relayAnswer(c, src.failed, nil)
		return
	}
	if src.resp.ContentLength > c.backend.CopyEmulation.singlePutLimit() {
		// A copy on the store: the source's bytes need not pass here.
		src.resp.Body.Close()
		p.copyByParts(c, src, storeCond)
		return
	}
	defer src.resp.Body.Close()
	p.copyBySinglePut(c, src, storeCond)
}

// copyStoreCondition is the destination condition the store checks with
// the final write: If-None-Match: *, or If-Match with one ETag. Other
// If-Match forms (*, a list) are evaluated on a HEAD and reduced to
// If-Match: <the ETag read>, which the store's atomic check then holds.
func (p *Proxy) copyStoreCondition(c *call, conds precondition.Conditions) (http.Header, error) {
	etags := conds.ETags()
	switch {
	case conds.IsCreate():
		return http.Header{precondition.HeaderIfNoneMatch: {"*"}}, nil
	case len(etags) == 1 && etags[0] != "*":
		return http.Header{precondition.HeaderIfMatch: {etags[0]}}, nil
	}
	state, err := c.backend.head(c.r.Context(), c.target)
	if err != nil {
		return nil, err
	}
	if err := conds.Evaluate(state); err != nil {
		return nil, err
	}
	return http.Header{precondition.HeaderIfMatch: {state.ETag}}, nil
}

// copySourceRead is a copy source's GET: its answer (resp) when it is the
// object, or the store's refusal (failed) to relay as the copy's answer.
type copySourceRead struct {
	resp, failed *http.Response
	etag         string
}

// openCopySource GETs the copy source (its version, if named) and checks
// the x-amz-copy-source-if-* conditions on what the GET answered, so the
// bytes copied are the ones the conditions passed.
func (b *Backend) openCopySource(c *call) (copySourceRead, error) {
	src := c.copySource
	rawQuery := ""
	if src.versionID != "" {
		rawQuery = "versionId=" + strictEscape(src.versionID)
	}
	resp, err := b.send(b.newRequest(c.r.Context(), http.MethodGet, src.bucket, escapeKey(src.key), rawQuery, sourceReadHeader(c.r.Header)))
	if err != nil {
		return copySourceRead{}, backendError(err)
	}
	if resp.StatusCode != http.StatusOK {
		return copySourceRead{failed: resp}, nil
	}
	read := copySourceRead{resp: resp, etag: resp.Header.Get("ETag")}
	if failed := precondition.EvaluateCopySource(c.r.Header, read.etag, resp.Header.Get("Last-Modified")); failed != "" {
		resp.Body.Close()
		return copySourceRead{}, s3err.Precondition(strings.ToLower(failed))
	}
	switch {
	case resp.ContentLength < 0:
		resp.Body.Close()
		return copySourceRead{}, s3err.Newf(s3err.BadGateway, "The backend's GET of the copy source gave no length.")
	case resp.ContentLength > maxCopySource:
		resp.Body.Close()
		return copySourceRead{}, s3err.Newf(s3err.InvalidRequest, "The specified copy source is larger than the maximum allowable size for a copy source: %d", int64(maxCopySource))
	}
	return read, nil
}

// copyBySinglePut streams the source's bytes into a PutObject of the
// destination carrying the store condition. The source's MD5 ETag goes
// with it as Content-MD5: the store refuses bytes that are not the
// source's.
func (p *Proxy) copyBySinglePut(c *call, src copySourceRead, storeCond http.Header) {
	h, err := c.backend.destinationHeader(c, src.resp.Header)
	if err != nil {
		p.fail(c, err)
		return
	}
	for name, values := range storeCond {
		h[name] = values
	}
	if md5 := sourceContentMD5(src.resp.Header); md5 != "" {
		h.Set("Content-Md5", md5)
	}
	h.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	req := c.backend.newRequest(c.r.Context(), http.MethodPut, c.target.Bucket, c.target.RawKey, "", h)
	req.Body, req.ContentLength = io.NopCloser(src.resp.Body), src.resp.ContentLength
	if req.ContentLength == 0 {
		req.Body = http.NoBody
	}
	resp, err := c.backend.send(req)
	if err != nil {
		p.fail(c, backendError(err))
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		p.relayAnswer(c, resp, nil)
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, s3xml.MaxBackendDocument))
	p.answerCopy(c, src, resp.Header, resp.Header.Get("ETag"))
}

// sourceContentMD5 is the Content-MD5 of a source whose ETag is the MD5
// of its bytes: a single-part object not encrypted with SSE-KMS or SSE-C
// (S3 gives those an ETag that is not their MD5). "" otherwise.
func sourceContentMD5(source http.Header) string {
	sse := strings.ToLower(source.Get("X-Amz-Server-Side-Encryption"))
	if strings.HasPrefix(sse, "aws:kms") || source.Get("X-Amz-Server-Side-Encryption-Customer-Algorithm") != "" {
		return ""
	}
	return etagContentMD5(source.Get("ETag"))
}

// etagContentMD5 is the Content-MD5 of a single-part object's ETag (its MD5
// in hex), or "" for any other ETag (a multipart one, a store's own).
func etagContentMD5(etag string) string {
	raw, err := hex.DecodeString(strings.Trim(etag, `"`))
	if err != nil || len(raw) != 16 {
		return ""
	}
	return base64.StdEncoding.EncodeToString(raw)
}

// copyObjectResult is S3's answer to a CopyObject.
type copyObjectResult struct {
	XMLName           xml.Name `xml:"CopyObjectResult"`
	Xmlns             string   `xml:"xmlns,attr"`
	ETag              string   `xml:"ETag"`
	LastModified      string   `xml:"LastModified"`
	ChecksumCRC32     string   `xml:"ChecksumCRC32,omitempty"`
	ChecksumCRC32C    string   `xml:"ChecksumCRC32C,omitempty"`
	ChecksumCRC64NVME string   `xml:"ChecksumCRC64NVME,omitempty"`
	ChecksumSHA1      string   `xml:"ChecksumSHA1,omitempty"`
	ChecksumSHA256    string   `xml:"ChecksumSHA256,omitempty"`
}

// answerCopy answers the client as S3 answers a CopyObject: the written
// object's ETag, its time (the store's Last-Modified, else the write's
// Date: a PutObject's answer carries no Last-Modified on most stores) and
// checksums in a CopyObjectResult, its version and encryption in headers.
func (p *Proxy) answerCopy(c *call, src copySourceRead, written http.Header, etag string) {
	modified, err := http.ParseTime(written.Get("Last-Modified"))
	if err != nil {
		if modified, err = http.ParseTime(written.Get("Date")); err != nil {
			modified = time.Now()
		}
	}
	result := copyObjectResult{
		Xmlns: s3xml.Namespace, ETag: etag, LastModified: modified.UTC().Format("2006-01-02T15:04:05.000Z"),
		ChecksumCRC32: written.Get("X-Amz-Checksum-Crc32"), ChecksumCRC32C: written.Get("X-Amz-Checksum-Crc32c"),
		ChecksumCRC64NVME: written.Get("X-Amz-Checksum-Crc64nvme"), ChecksumSHA1: written.Get("X-Amz-Checksum-Sha1"),
		ChecksumSHA256: written.Get("X-Amz-Checksum-Sha256"),
	}
	body, err := xml.Marshal(result)
	if err != nil {
		p.fail(c, s3err.Wrap(s3err.InternalError, err))
		return
	}
	out := c.w.Header()
	for name, values := range written {
		if strings.HasPrefix(name, "X-Amz-Server-Side-Encryption") || name == "X-Amz-Version-Id" {
			out[s3ResponseName(name)] = values
		}
	}
	if v := src.resp.Header.Get("X-Amz-Version-Id"); v != "" {
		out["x-amz-copy-source-version-id"] = []string{v}
	}
	out.Set("Content-Type", "application/xml")
	out.Set("Content-Length", strconv.Itoa(len(xml.Header)+len(body)))
	c.w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(c.w, xml.Header)
	_, _ = c.w.Write(body)
}

// abortContext outlives the client's request: an upload the emulated copy
// began is aborted even when its client hung up.
func abortContext(c *call) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(c.r.Context()), 30*time.Second)
}

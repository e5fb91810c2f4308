package proxy

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/internal/s3err"
	"github.com/s3cond/s3cond/internal/s3xml"
	"github.com/s3cond/s3cond/precondition"
)

// maxDeleteBody bounds a DeleteObjects request: 1000 keys of 1024 bytes
// with XML around them fit well within it.
const maxDeleteBody = 2 << 20

// serveDeleteObjects handles POST /bucket?delete. Entries without an ETag
// are forwarded as they are (in strict mode they take their key's lease
// too); entries with one are deleted only if the ETag still matches, under
// that key's lease (SPEC §2, §3 step 5: leases are
// taken in key order, so two such requests cannot deadlock).
func (p *Proxy) serveDeleteObjects(c *call) {
	data, err := io.ReadAll(io.LimitReader(c.auth.Body, maxDeleteBody+1))
	if err != nil {
		p.fail(c, err)
		return
	}
	if len(data) > maxDeleteBody {
		p.fail(c, s3err.Newf(s3err.MalformedXML, "The DeleteObjects request body is too large."))
		return
	}
	req, err := s3xml.ParseDeleteRequest(bytes.NewReader(data), maxDeleteBody)
	if err != nil {
		p.fail(c, err)
		return
	}
	strict := p.serializeAllWrites(c.target.Bucket)
	hasETag := false
	for _, o := range req.Objects {
		hasETag = hasETag || o.ETag != ""
	}
	if (!hasETag && !strict) || c.backend.NativeConditional {
		// The client's checksum header may be dropped (checksums:
		// verify-only), and S3 servers require an integrity header on
		// DeleteObjects: send the MD5 of the bytes that are forwarded.
		p.forward(c, forwardSpec{body: bytes.NewReader(data), length: int64(len(data)), payloadSHA256: sha256Hex(data),
			header: http.Header{"Content-Md5": {contentMD5(data)}}})
		return
	}
	if p.leases == nil {
		p.fail(c, s3err.Newf(s3err.NotImplemented, "Conditional deletes need a lease store, and none is configured."))
		return
	}

	result := &s3xml.DeleteResult{}
	var allowed []s3xml.ObjectIdentifier
	var held []*dynamolease.Lease
	defer func() {
		for _, l := range held {
			p.releaseInBackground(l)
		}
	}()
	conditional := make([]s3xml.ObjectIdentifier, 0, len(req.Objects))
	for _, o := range req.Objects {
		if o.ETag == "" && !strict {
			allowed = append(allowed, o)
		} else {
			conditional = append(conditional, o)
		}
	}
	sort.SliceStable(conditional, func(i, j int) bool { return conditional[i].Key < conditional[j].Key })
	for _, o := range conditional {
		t := target{Bucket: c.target.Bucket, Key: o.Key, RawKey: escapeKey(o.Key)}
		var cond writeCondition = precondition.ForETag(o.ETag)
		if o.ETag == "" {
			cond = anyState{}
		}
		lease, err := p.acquireLease(c.r.Context(), c, t, cond, nil)
		if err != nil {
			e := s3err.As(err)
			result.Errors = append(result.Errors, s3xml.DeleteError{Key: o.Key, VersionID: o.VersionID, Code: string(e.Code), Message: e.Message})
			continue
		}
		held = append(held, lease)
		o.ETag = ""
		allowed = append(allowed, o)
	}

	if len(allowed) > 0 {
		backendResult, err := p.deleteOnBackend(c, &s3xml.DeleteRequest{Quiet: req.Quiet, Objects: allowed})
		if err != nil {
			p.fail(c, err)
			return
		}
		result.Deleted = append(result.Deleted, backendResult.Deleted...)
		result.Errors = append(result.Errors, backendResult.Errors...)
	}
	if req.Quiet {
		result.Deleted = nil
	}
	body := result.Marshal()
	h := c.w.Header()
	h.Set("Content-Type", "application/xml")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	c.w.WriteHeader(http.StatusOK)
	_, _ = c.w.Write(body)
}

// deleteOnBackend sends a DeleteObjects for the allowed entries and reads
// the backend's per-key result.
func (p *Proxy) deleteOnBackend(c *call, req *s3xml.DeleteRequest) (*s3xml.DeleteResult, error) {
	body := req.Marshal()
	spec := forwardSpec{
		body: bytes.NewReader(body), length: int64(len(body)), payloadSHA256: sha256Hex(body),
		header: http.Header{"Content-Md5": {contentMD5(body)}},
	}
	out, _, err := p.outboundRequest(c, spec)
	if err != nil {
		return nil, err
	}
	// The client's checksum was of its own body, not of this one.
	for name := range out.Header {
		if isChecksumHeader(name) {
			out.Header.Del(name)
		}
	}
	resp, err := c.backend.Client.Do(out)
	if err != nil {
		return nil, backendError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, s3err.Newf(s3err.BadGateway, "The backend answered DeleteObjects with status %d.", resp.StatusCode)
	}
	return s3xml.ParseDeleteResult(resp.Body, maxDeleteBody*4)
}

// escapeKey escapes an object key for a URL path, keeping '/' separators.
func escapeKey(key string) string {
	segments := strings.Split(key, "/")
	for i, s := range segments {
		segments[i] = url.PathEscape(s)
	}
	return strings.Join(segments, "/")
}

func contentMD5(b []byte) string {
	sum := md5.Sum(b)
	return base64.StdEncoding.EncodeToString(sum[:])
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

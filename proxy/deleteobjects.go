package proxy

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/s3xml"
	"github.com/s3cond/s3cond/precondition"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
	"github.com/s3cond/s3cond/s3err"
)

// maxDeleteBody bounds a DeleteObjects request: 1000 keys of 1024 bytes
// with XML around them fit well within it.
const maxDeleteBody = 2 << 20

// serveDeleteObjects handles POST /bucket?delete. Every entry is a
// DeleteObject of its own: its key must pass the backend's key policy (an
// entry that does not gets its own error and never reaches the backend),
// and an entry with a condition (<ETag>, <Size>, <LastModifiedTime>; in
// strict mode, every entry) is deleted only under its key's lease
// (proxy/leasedwrite/delete.go). The backend is sent a document
// s3cond wrote itself from the entries it accepted, never the client's
// bytes: what was checked is what is deleted.
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
	if c.backend.RefuseConditionalDeletes && anyConditional(req.Objects) {
		p.fail(c, conditionalDeleteRefused()) // before any entry is deleted
		return
	}
	result := &s3xml.DeleteResult{}
	accepted := make([]s3xml.ObjectIdentifier, 0, len(req.Objects))
	for _, o := range req.Objects {
		if err := c.backend.KeyPolicy.Check(o.Key); err != nil {
			result.Errors = append(result.Errors, s3xml.EntryError(o, err))
			continue
		}
		// A size or time that does not parse would make the entry
		// unconditional: it is answered, never sent.
		if _, err := precondition.ForDeleteEntry(o.ETag, o.Size, o.LastModifiedTime); err != nil {
			result.Errors = append(result.Errors, s3xml.EntryError(o, err))
			continue
		}
		if err := p.deleteEntryPolicy(c, o); err != nil {
			result.Errors = append(result.Errors, s3xml.EntryError(o, err))
			continue
		}
		accepted = append(accepted, o)
	}

	strict := p.serializeAllWrites(c.target.Bucket)
	conditional := false
	for _, o := range accepted {
		conditional = conditional || o.Conditional()
	}
	mode := c.backend.mode()
	switch {
	case len(accepted) == 0:
	case !mode.Leases() && conditional && mode.Rule(operation.DeleteObjects) == leasedwrite.RuleEntriesAsDeletes:
		if err := p.deleteEntriesApart(c, accepted, result); err != nil { // deleteentries.go
			p.fail(c, err)
			return
		}
	case !mode.Leases() || (!conditional && !strict):
		// No lease: the entries (with their conditions, for a store that
		// enforces them) go to the backend as they are.
		if err := p.deleteUnleased(c, accepted, result); err != nil {
			p.fail(c, err)
			return
		}
	case p.leased == nil:
		p.fail(c, s3err.Newf(s3err.NotImplemented, "Conditional deletes need a lease store, and none is configured."))
		return
	default:
		if err := p.leased.DeleteObjects(p.leasedRequest(c, mode), accepted, strict, result, deleteSender{p: p, c: c}); err != nil {
			p.fail(c, err)
			return
		}
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

// deleteUnleased sends the accepted entries to the backend and answers each.
func (p *Proxy) deleteUnleased(c *call, entries []s3xml.ObjectIdentifier, result *s3xml.DeleteResult) error {
	sent := distinctEntries(entries)
	backendResult, _, err := p.deleteOnBackend(c, c.r.Context(), sent)
	if err != nil {
		return err
	}
	answerEntries(entries, backendResult, result)
	return nil
}

// deleteOnBackend sends a DeleteObjects (never quiet, so every entry has its
// answer) for objs and reads the backend's per-key result. answered says
// the backend's answer was read in full, whatever it said.
func (p *Proxy) deleteOnBackend(c *call, ctx context.Context, objs []s3xml.ObjectIdentifier) (*s3xml.DeleteResult, bool, error) {
	body := (&s3xml.DeleteRequest{Objects: objs}).Marshal()
	spec := forwardSpec{
		body: bytes.NewReader(body), length: int64(len(body)), payloadSHA256: sha256Hex(body),
		header: http.Header{"Content-Md5": {contentMD5(body)}}, guard: leasedwrite.Guard{Ctx: ctx},
	}
	out, _, err := p.outboundRequest(c, spec)
	if err != nil {
		return nil, false, err
	}
	// The client's checksum was of its own body, not of this one.
	for name := range out.Header {
		if isChecksumHeader(name) {
			out.Header.Del(name)
		}
	}
	resp, err := c.backend.Client.Do(out)
	if err != nil {
		return nil, false, backendError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, copyErr := io.Copy(io.Discard, io.LimitReader(resp.Body, maxDeleteBody))
		return nil, copyErr == nil, deleteStatusError(resp.StatusCode)
	}
	res, err := s3xml.ParseDeleteResult(resp.Body, maxDeleteBody*4)
	if err != nil {
		return nil, false, err
	}
	return res, true, nil
}

// deleteStatusError is the client's answer when the backend refused a whole
// DeleteObjects: S3's own error for what that status can only mean, else
// 502 (the backend's body stays in s3cond: it may name the store's keys).
func deleteStatusError(status int) error {
	switch status {
	case http.StatusNotFound:
		return s3err.New(s3err.NoSuchBucket)
	case http.StatusForbidden:
		return s3err.Newf(s3err.AccessDenied, "The store refused s3cond's DeleteObjects.")
	}
	return s3err.Newf(s3err.BadGateway, "The backend answered DeleteObjects with status %d.", status)
}

// entryKey names what one DeleteObjects entry deletes.
type entryKey struct{ key, versionID string }

// distinctEntries drops repeated entries: each is sent to the backend once,
// and every repeat gets the same answer (answerEntries).
func distinctEntries(entries []s3xml.ObjectIdentifier) []s3xml.ObjectIdentifier {
	seen := make(map[s3xml.ObjectIdentifier]bool, len(entries))
	out := make([]s3xml.ObjectIdentifier, 0, len(entries))
	for _, o := range entries {
		if !seen[o] {
			seen[o] = true
			out = append(out, o)
		}
	}
	return out
}

// answerEntries gives every entry sent to the backend its answer from the
// backend's result, matched by key and version: S3 answers each entry of
// the request, repeats included. An entry the backend left out is an error.
func answerEntries(entries []s3xml.ObjectIdentifier, br *s3xml.DeleteResult, result *s3xml.DeleteResult) {
	type answer struct {
		deleted *s3xml.Deleted
		failed  *s3xml.DeleteError
	}
	answers := map[entryKey][]answer{}
	for i := range br.Deleted {
		k := entryKey{br.Deleted[i].Key, br.Deleted[i].VersionID}
		answers[k] = append(answers[k], answer{deleted: &br.Deleted[i]})
	}
	for i := range br.Errors {
		k := entryKey{br.Errors[i].Key, br.Errors[i].VersionID}
		answers[k] = append(answers[k], answer{failed: &br.Errors[i]})
	}
	for _, o := range entries {
		k := entryKey{o.Key, o.VersionID}
		queue := answers[k]
		var a answer
		switch len(queue) {
		case 0:
			result.Errors = append(result.Errors, s3xml.EntryError(o, s3err.Newf(s3err.InternalError, "The backend did not report on this key.")))
			continue
		case 1: // repeats of an entry sent once share its answer
			a = queue[0]
		default:
			a, answers[k] = queue[0], queue[1:]
		}
		if a.deleted != nil {
			result.Deleted = append(result.Deleted, *a.deleted)
		} else {
			result.Errors = append(result.Errors, *a.failed)
		}
	}
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

package proxy

import (
	"context"
	"io"
	"net/http"
	"sync"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/s3xml"
	"github.com/s3cond/s3cond/precondition"
	"github.com/s3cond/s3cond/s3err"
)

// entryDeletesAtOnce bounds the DeleteObjects a DeleteObjects' conditional
// entries become that are in flight at once.
const entryDeletesAtOnce = 16

// entryForwardedHeaders are the DeleteObjects headers that bear on each
// entry's delete as they would on the whole (as s3cond parsed them).
var entryForwardedHeaders = []string{"X-Amz-Expected-Bucket-Owner", "X-Amz-Request-Payer", "X-Amz-Bypass-Governance-Retention", "X-Amz-Mfa"}

// deleteEntriesApart serves a DeleteObjects on a store that ignores entry
// ETags but checks DeleteObject's If-Match atomically
// (leasedwrite.RuleEntriesAsDeletes, versitygw v1.8.0): each conditional
// entry is one DeleteObject with If-Match (its size or time conditions
// reduced to the ETag a HEAD read), the unconditional ones one
// DeleteObjects. Every entry is its own atomic delete, as in S3.
func (p *Proxy) deleteEntriesApart(c *call, entries []s3xml.ObjectIdentifier, result *s3xml.DeleteResult) error {
	var unconditional, repeats []s3xml.ObjectIdentifier
	for _, o := range entries {
		if o.Conditional() {
			repeats = append(repeats, o)
		} else {
			unconditional = append(unconditional, o)
		}
	}
	conditional := distinctEntries(repeats)
	if len(unconditional) > 0 {
		if err := p.deleteUnleased(c, unconditional, result); err != nil {
			return err
		}
	}
	answers := make([]s3xml.DeleteResult, len(conditional))
	slots := make(chan struct{}, entryDeletesAtOnce)
	var wg sync.WaitGroup
	for i, o := range conditional {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			answers[i] = p.deleteEntryAlone(c, o)
		})
	}
	wg.Wait()
	byEntry := &s3xml.DeleteResult{}
	for _, a := range answers {
		byEntry.Deleted = append(byEntry.Deleted, a.Deleted...)
		byEntry.Errors = append(byEntry.Errors, a.Errors...)
	}
	answerEntries(repeats, byEntry, result)
	return nil
}

// deleteEntryAlone deletes one conditional entry by a DeleteObject and
// answers it as DeleteObjects would.
func (p *Proxy) deleteEntryAlone(c *call, o s3xml.ObjectIdentifier) s3xml.DeleteResult {
	ctx := c.r.Context()
	t := operation.Target{Bucket: c.target.Bucket, Key: o.Key, RawKey: escapeKey(o.Key)}
	send := func(etag string) (*http.Response, error) { return p.sendEntryDelete(ctx, c, t, o.VersionID, etag) }
	conds, err := precondition.ForDeleteEntry(o.ETag, o.Size, o.LastModifiedTime)
	var resp *http.Response
	switch {
	case err != nil:
	case conds.HasSizeOrTime():
		resp, err = reduceToIfMatch(ctx, c.backend, t, conds, send)
	default:
		if resp, err = send(o.ETag); err != nil {
			err = backendError(err)
		}
	}
	switch {
	case err != nil:
		return s3xml.DeleteResult{Errors: []s3xml.DeleteError{s3xml.EntryError(o, err)}}
	case resp == nil:
		return s3xml.DeleteResult{Deleted: []s3xml.Deleted{{Key: o.Key, VersionID: o.VersionID}}}
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDeleteBody))
	return entryAnswer(o, resp)
}

// entryAnswer is a DeleteObjects entry's answer from its DeleteObject's.
func entryAnswer(o s3xml.ObjectIdentifier, resp *http.Response) s3xml.DeleteResult {
	switch status := resp.StatusCode; {
	case status < http.StatusMultipleChoices:
		d := s3xml.Deleted{Key: o.Key, VersionID: o.VersionID}
		if resp.Header.Get("X-Amz-Delete-Marker") == "true" {
			d.DeleteMarker, d.DeleteMarkerVersionID = true, resp.Header.Get("X-Amz-Version-Id")
		}
		return s3xml.DeleteResult{Deleted: []s3xml.Deleted{d}}
	case status == http.StatusPreconditionFailed:
		return s3xml.DeleteResult{Errors: []s3xml.DeleteError{s3xml.EntryError(o, s3err.Precondition(precondition.HeaderIfMatch))}}
	case status == http.StatusNotFound:
		return s3xml.DeleteResult{Errors: []s3xml.DeleteError{s3xml.EntryError(o, s3err.New(s3err.NoSuchKey))}}
	case status == http.StatusForbidden:
		return s3xml.DeleteResult{Errors: []s3xml.DeleteError{s3xml.EntryError(o, s3err.Newf(s3err.AccessDenied, "The store refused the delete."))}}
	default:
		return s3xml.DeleteResult{Errors: []s3xml.DeleteError{s3xml.EntryError(o, s3err.Newf(s3err.BadGateway, "The backend answered DeleteObject with status %d.", status))}}
	}
}

// sendEntryDelete sends DeleteObject If-Match: etag for t (and version).
func (p *Proxy) sendEntryDelete(ctx context.Context, c *call, t operation.Target, versionID, etag string) (*http.Response, error) {
	header := make(http.Header, 8)
	header.Set(precondition.HeaderIfMatch, etag)
	for _, name := range entryForwardedHeaders {
		if v := c.checkedHeader[name]; len(v) > 0 {
			header[name] = v
		}
	}
	query := ""
	if versionID != "" {
		query = "versionId=" + strictEscape(versionID)
	}
	return c.backend.send(c.backend.newRequest(ctx, http.MethodDelete, t.Bucket, t.RawKey, query, header))
}

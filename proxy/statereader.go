package proxy

import (
	"context"
	"io"
	"net/http"
	"strconv"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/s3xml"
	"github.com/s3cond/s3cond/precondition"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
	"github.com/s3cond/s3cond/s3err"
)

// callState is what a leased write reads of the store for one call
// (leasedwrite.StateReader): the target's state by HEAD, and the size of a
// copy's source or of a completion's parts, by which its lease is sized.
type callState struct{ c *call }

var _ leasedwrite.StateReader = callState{}

func (s callState) Head(ctx context.Context, t operation.Target) (precondition.ObjectState, error) {
	return s.c.backend.head(ctx, t)
}

func (s callState) CopySourceSize(ctx context.Context) (int64, error) {
	return s.c.backend.copySourceSize(ctx, s.c.copySource)
}

func (s callState) PartsTotal(ctx context.Context) (int64, error) {
	return s.c.backend.uploadedSize(ctx, s.c.target, s.c.query.Get("uploadId"))
}

// A CompleteMultipartUpload's parts are read a page of maxPartsPage at a
// time, at most maxPartsPages pages (S3's 10 000 parts), each page's
// document at most maxPartsDocument bytes.
const (
	maxPartsPage     = 1000
	maxPartsPages    = 10_000/maxPartsPage + 1
	maxPartsDocument = 1 << 20
)

// copySourceSize is the size of the object a CopyObject copies, by a HEAD
// of it; 0 when it is missing, since the copy then fails at the store
// without writing anything.
func (b *Backend) copySourceSize(ctx context.Context, src *copySource) (int64, error) {
	if src == nil {
		return 0, nil
	}
	rawQuery := ""
	if src.versionID != "" {
		rawQuery = "versionId=" + strictEscape(src.versionID)
	}
	resp, err := b.send(b.newRequest(ctx, http.MethodHead, src.bucket, escapeKey(src.key), rawQuery, nil))
	if err != nil {
		return 0, backendError(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		size, err := strconv.ParseInt(resp.Header.Get("Content-Length"), 10, 64)
		if err != nil || size < 0 {
			return 0, s3err.Newf(s3err.BadGateway, "The backend's HEAD of the copy source gave no size.")
		}
		return size, nil
	case http.StatusNotFound:
		return 0, nil
	case http.StatusForbidden:
		return 0, s3err.Newf(s3err.AccessDenied, "The backend refused s3cond's HEAD of the copy source.")
	}
	return 0, s3err.Newf(s3err.BadGateway, "The backend answered HEAD of the copy source with status %d.", resp.StatusCode)
}

// uploadedSize sums the sizes of a multipart upload's parts, by ListParts:
// an upper bound of what its completion assembles (it may name fewer). 0
// when the upload is unknown, since the completion then fails at the store.
func (b *Backend) uploadedSize(ctx context.Context, t operation.Target, uploadID string) (int64, error) {
	var total int64
	marker := ""
	for range maxPartsPages {
		page, missing, err := b.listPartsPage(ctx, t, uploadID, marker)
		if err != nil || missing {
			return 0, err
		}
		for _, size := range page.Sizes {
			if size > 0 {
				total += size
			}
		}
		if !page.IsTruncated || page.NextPartNumberMarker == "" || page.NextPartNumberMarker == marker {
			return total, nil
		}
		marker = page.NextPartNumberMarker
	}
	return 0, s3err.Newf(s3err.BadGateway, "The backend lists more than 10 000 parts for the upload.")
}

// listPartsPage reads one page of the upload's parts; missing when the
// store does not know the upload (NoSuchUpload).
func (b *Backend) listPartsPage(ctx context.Context, t operation.Target, uploadID, marker string) (page s3xml.PartsPage, missing bool, err error) {
	query := "max-parts=" + strconv.Itoa(maxPartsPage)
	if marker != "" {
		query += "&part-number-marker=" + strictEscape(marker)
	}
	query += "&uploadId=" + strictEscape(uploadID)
	resp, err := b.send(b.newRequest(ctx, http.MethodGet, t.Bucket, t.RawKey, query, nil))
	if err != nil {
		return page, false, backendError(err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return page, true, nil
	case http.StatusMethodNotAllowed, http.StatusNotImplemented:
		return page, false, leasedwrite.ErrPartsUnlisted
	default:
		return page, false, s3err.Newf(s3err.BadGateway, "The backend answered ListParts with status %d.", resp.StatusCode)
	}
	page, err = s3xml.ReadPartsPage(resp.Body, maxPartsDocument, maxPartsPage)
	if err != nil {
		return page, false, s3err.Wrap(s3err.BadGateway, err)
	}
	return page, false, nil
}

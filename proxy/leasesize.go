package proxy

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/s3xml"
	"github.com/s3cond/s3cond/s3err"
)

// DefaultMinStoreThroughput is the rate, in bytes per second, at which the
// store is assumed to copy at least (lease.min_store_mib_per_second).
const DefaultMinStoreThroughput = 16 << 20

// maxLeaseLength bounds a sized lease where no lease store is configured:
// the longest a lease row may carry (24 h). With one, the bound is its
// lease.max_sized_timeout (sizedLeaseCap).
const maxLeaseLength = dynamolease.MaxSizedTimeout

// sizedLeaseCap is the longest lease a sized write gets
// (lease.max_sized_timeout): every wait that stands for rows nobody can
// read waits it × skew, so no row may carry more. Work beyond it is guarded
// by renewals while its holder lives; a vanished holder's row is taken over
// after the cap × skew, and the store must be done by then.
func (p *Proxy) sizedLeaseCap() time.Duration {
	if p.leases == nil {
		return maxLeaseLength
	}
	return p.leases.Options().SizedLeaseCap
}

// A CompleteMultipartUpload's parts are read a page of maxPartsPage at a
// time, at most maxPartsPages pages (S3's 10 000 parts), each page's
// document at most maxPartsDocument bytes.
const (
	maxPartsPage     = 1000
	maxPartsPages    = 10_000/maxPartsPage + 1
	maxPartsDocument = 1 << 20
)

// leaseSizing measures the work the store does for a leased write once it
// is sent, to size its lease (docs/spec.md §3): a CopyObject copies its
// source, a CompleteMultipartUpload assembles its parts, and the store goes
// on doing so after the s3cond that asked is gone (killed, paused, cut
// off). The row must then stay held until that work could have ended, in
// every process of a fleet: the lease is extended to lease.timeout plus
// the work's bytes at lease.min_store_mib_per_second, written on the row.
// The measure (a HEAD of the source; ListParts, one request per thousand
// parts) runs beside the destination's HEAD and the lease, so it adds no
// round trip of its own; the extension adds one lease write, for large
// work only (leaseLengthFor). Other writes send their bytes themselves and
// keep lease.timeout.
type leaseSizing struct {
	done   chan struct{}
	length time.Duration
	err    error
}

// startSizing starts measuring c's store work; nil when its write has none.
func (p *Proxy) startSizing(c *call) *leaseSizing {
	if c.op != operation.CopyObject && c.op != operation.CompleteMultipartUpload {
		return nil
	}
	s := &leaseSizing{done: make(chan struct{})}
	go func() {
		defer close(s.done)
		var work int64
		if c.op == operation.CopyObject {
			work, s.err = c.backend.copySourceSize(c.r.Context(), c.copySource)
		} else {
			work, s.err = c.backend.uploadedSize(c.r.Context(), c.target, c.query.Get("uploadId"))
		}
		if errors.Is(s.err, errPartsUnlisted) {
			// The completion still runs, under the plain lease: it is sent
			// with at least half of it left (SPEC §3 step 5), which the
			// store's assembly must fit in.
			s.err = nil
			if !p.partsUnlistedLogged.Swap(true) {
				p.log.Warn().Str("backend", c.backend.Name).
					Msg("the backend does not implement ListParts: conditional CompleteMultipartUpload leases are not sized to their parts, and its assembly must finish within lease.timeout / 2")
			}
		}
		s.length = p.leaseLengthFor(work)
		if s.err == nil && s.length == p.sizedLeaseCap() {
			p.log.Warn().Str("request_id", c.id).Str("operation", c.op.String()).Int64("work_bytes", work).
				Dur("lease", s.length).
				Msg("store work longer than lease.max_sized_timeout at lease.min_store_mib_per_second; if this s3cond vanishes, the key may be taken over before the store is done")
		}
	}()
	return s
}

// extend lengthens l to the measured work once the measure is in; a nil
// sizing leaves l as it is.
func (s *leaseSizing) extend(ctx context.Context, l *dynamolease.Lease) error {
	if s == nil {
		return nil
	}
	select {
	case <-s.done:
	case <-ctx.Done():
		return s3err.Wrap(s3err.InternalError, ctx.Err())
	}
	if s.err != nil {
		return s.err
	}
	if err := l.Extend(ctx, s.length); err != nil {
		if errors.Is(err, dynamolease.ErrLeaseLost) {
			return s3err.Wrap(s3err.ConditionalRequestConflict, err)
		}
		return s3err.Wrap(s3err.ServiceUnavailable, err)
	}
	return nil
}

// leaseLengthFor is lease.timeout plus the time the store takes for work
// bytes at the assumed minimum throughput, or lease.timeout alone when that
// time is at most a quarter of it: a write goes out only while half its
// lease remains (SPEC §3 step 5), and no process takes the row over sooner
// than lease.timeout after its last write, so the store has half the lease
// for it, and a quarter to spare.
func (p *Proxy) leaseLengthFor(work int64) time.Duration {
	if work <= 0 {
		return p.leaseTimeout
	}
	seconds := float64(work) / p.minStoreThroughput
	if seconds <= (p.leaseTimeout / 4).Seconds() {
		return p.leaseTimeout
	}
	limit := p.sizedLeaseCap()
	if seconds >= limit.Seconds() {
		return limit
	}
	return min(p.leaseTimeout+time.Duration(math.Ceil(seconds*float64(time.Second))), limit)
}

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

// errPartsUnlisted: the store does not implement ListParts (s3rver
// answers 405), so a completion's work cannot be measured.
var errPartsUnlisted = errors.New("the store does not list an upload's parts")

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
		return page, false, errPartsUnlisted
	default:
		return page, false, s3err.Newf(s3err.BadGateway, "The backend answered ListParts with status %d.", resp.StatusCode)
	}
	page, err = s3xml.ReadPartsPage(resp.Body, maxPartsDocument, maxPartsPage)
	if err != nil {
		return page, false, s3err.Wrap(s3err.BadGateway, err)
	}
	return page, false, nil
}

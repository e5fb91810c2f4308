package admin

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
)

// LeasesPath is where the admin listener lists the lease rows, read-only,
// a page at a time, for `s3cond leases list` and `show`. It exposes object
// keys and the owners (host:pid) of their leases, so it takes the admin
// token, as release does.
const LeasesPath = "/leases"

// Bounds on a listing: the prefix and the position come from whoever
// reaches the listener; a page reads at most MaxPageRows rows of the store.
const (
	maxLeasePrefix = 1024
	maxPosition    = 4096
	// MaxPageRows is the largest page (and the default).
	MaxPageRows = 1000
)

// LeaseListing is the body of GET /leases (JSON).
type LeaseListing struct {
	// LeaseTTL is the process's lease.ttl: a row's TTL minus it is when the
	// row was last written, if this process's settings wrote it.
	LeaseTTL time.Duration `json:"lease_ttl_ns"`
	// MaxClockSkewRate is the process's lease.max_clock_skew_rate: a
	// contender takes a held row over timeout × it after first seeing it.
	MaxClockSkewRate float64 `json:"max_clock_skew_rate"`
	// Rows are one page, in the store's order; at most the page's limit.
	Rows []LeaseRow `json:"rows"`
	// Next, when set, is the continuation token of the next page (its
	// "after" parameter); the listing is complete without it.
	Next string `json:"next,omitempty"`
}

// LeaseRow is one lease row, as dynamolease.Record.
type LeaseRow struct {
	Path       string        `json:"path"`
	ETag       string        `json:"etag"`
	Generation uint64        `json:"generation"`
	Timeout    time.Duration `json:"timeout_ns"`
	TTL        time.Time     `json:"ttl,omitzero"`
	Owner      string        `json:"owner,omitempty"`
	Released   bool          `json:"released,omitempty"`
	Unreadable string        `json:"unreadable,omitempty"`
}

// RowFromRecord is r as a LeaseRow.
func RowFromRecord(r dynamolease.Record) LeaseRow {
	return LeaseRow{Path: r.Path, ETag: r.ETag, Generation: r.Generation, Timeout: r.Timeout, TTL: r.TTL,
		Owner: r.Owner, Released: r.Released, Unreadable: r.Unreadable}
}

// Record is row as a dynamolease.Record.
func (row LeaseRow) Record() dynamolease.Record {
	return dynamolease.Record{Path: row.Path, ETag: row.ETag, Generation: row.Generation, Timeout: row.Timeout,
		TTL: row.TTL, Owner: row.Owner, Released: row.Released, Unreadable: row.Unreadable}
}

// LeasesHandler serves GET /leases?prefix=P&after=TOKEN&limit=N from
// lister, for callers presenting token (Authorization: Bearer). It only
// reads; each request reads one page of at most MaxPageRows rows.
func LeasesHandler(lister dynamolease.PageLister, token string, leaseTTL time.Duration, skewRate float64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !bearerMatches(r.Header.Values("Authorization"), token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="s3cond admin"`)
			http.Error(w, "listing leases needs Authorization: Bearer <the token in data_dir/"+TokenFileName+">", http.StatusUnauthorized)
			return
		}
		page, problem := parsePage(r.URL.Query())
		if problem != "" {
			http.Error(w, problem, http.StatusBadRequest)
			return
		}
		records, next, err := lister.ListPage(r.Context(), page.prefix, page.after, page.limit)
		if errors.Is(err, dynamolease.ErrBadPosition) {
			http.Error(w, "after is not a continuation token of this listing", http.StatusBadRequest)
			return
		}
		if err != nil {
			http.Error(w, "list leases: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		listing := LeaseListing{LeaseTTL: leaseTTL, MaxClockSkewRate: skewRate, Rows: make([]LeaseRow, 0, len(records))}
		for _, rec := range records {
			listing.Rows = append(listing.Rows, RowFromRecord(rec))
		}
		if next != "" {
			listing.Next = base64.RawURLEncoding.EncodeToString([]byte(next))
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(listing)
	})
}

type pageRequest struct {
	prefix, after string
	limit         int
}

// parsePage reads a page request's parameters, or says what is wrong.
func parsePage(q url.Values) (pageRequest, string) {
	page := pageRequest{prefix: q.Get("prefix"), limit: MaxPageRows}
	if len(page.prefix) > maxLeasePrefix {
		return page, "prefix too long"
	}
	if raw := q.Get("limit"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > MaxPageRows {
			return page, fmt.Sprintf("limit must be 1 to %d", MaxPageRows)
		}
		page.limit = n
	}
	if token := q.Get("after"); token != "" {
		after, err := base64.RawURLEncoding.DecodeString(token)
		if err != nil || len(token) > maxPosition {
			return page, "after is not a continuation token of this listing"
		}
		page.after = string(after)
	}
	return page, ""
}

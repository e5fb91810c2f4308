package admin

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
)

// LeasesPath is where the admin listener lists the lease rows, read-only,
// for `s3cond leases list` and `show` while this process holds the embedded
// lease file. It exposes object keys and the owners (host:pid) of their
// leases, one more reason the admin listener must stay private.
const LeasesPath = "/leases"

// Bounds on a listing: the prefix comes from whoever reaches the listener,
// the rows from the table.
const (
	maxLeasePrefix = 1024
	maxListedRows  = 10000
)

// LeaseListing is the body of GET /leases (JSON).
type LeaseListing struct {
	// LeaseTTL is the process's lease.ttl: a row's TTL minus it is when the
	// row was last written, if this process's settings wrote it.
	LeaseTTL time.Duration `json:"lease_ttl_ns"`
	// MaxClockSkewRate is the process's lease.max_clock_skew_rate: a
	// contender takes a held row over timeout × it after first seeing it.
	MaxClockSkewRate float64 `json:"max_clock_skew_rate"`
	// Rows are sorted by path and etag; at most maxListedRows of them.
	Rows []LeaseRow `json:"rows"`
	// Truncated says that more rows matched than Rows holds.
	Truncated bool `json:"truncated,omitempty"`
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

// LeasesHandler serves GET /leases?prefix=P from lister. It only reads,
// and authenticates nobody; releasing a row is ReleaseHandler's, behind
// its token (see docs/security.md).
func LeasesHandler(lister dynamolease.Lister, leaseTTL time.Duration, skewRate float64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		prefix := r.URL.Query().Get("prefix")
		if len(prefix) > maxLeasePrefix {
			http.Error(w, "prefix too long", http.StatusBadRequest)
			return
		}
		records, err := lister.List(r.Context(), prefix)
		if err != nil {
			http.Error(w, "list leases: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		listing := LeaseListing{LeaseTTL: leaseTTL, MaxClockSkewRate: skewRate, Rows: make([]LeaseRow, 0, min(len(records), maxListedRows))}
		for i, rec := range records {
			if i == maxListedRows {
				listing.Truncated = true
				break
			}
			listing.Rows = append(listing.Rows, RowFromRecord(rec))
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(listing)
	})
}

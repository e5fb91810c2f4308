package testservers

import (
	"net/http"
	"strings"
	"time"
)

// Quirks of stores that check an ETag atomically but get another part of
// a condition wrong, each a conditionalStore (atomicstores.go) otherwise:
// s3cond serves them without leases by reducing the condition to the
// store's own atomic check (leasedwrite.Rule).
type storeQuirks struct {
	// ignoresDeleteSizeTime: DeleteObject drops x-amz-if-match-size and
	// -last-modified-time (SeaweedFS 4.53).
	ignoresDeleteSizeTime bool
	// ignoresEntryETags: a DeleteObjects entry's ETag is dropped and the
	// entry deleted (versitygw v1.8.0).
	ignoresEntryETags bool
	// matchesUnquotedOnly: PutObject's If-Match never matches a quoted ETag
	// (Ceph RGW 16.2.15).
	matchesUnquotedOnly bool
}

// NewSizeTimeIgnoringStore stands for SeaweedFS 4.53's DeleteObject: its
// If-Match is atomic, its x-amz-if-match-size and -last-modified-time are
// ignored; every other condition atomic. The probe calls delete_if_match
// partial with remedy reduce_to_if_match.
func NewSizeTimeIgnoringStore(inner http.Handler) http.Handler {
	return &conditionalStore{inner: inner, keys: map[string]*keyHistory{}, quirks: storeQuirks{ignoresDeleteSizeTime: true}}
}

// NewEntryETagIgnoringStore stands for versitygw v1.8.0's DeleteObjects:
// entry ETags are ignored (the entry is deleted), DeleteObject's If-Match
// is atomic; every other condition atomic (versitygw's CopyObject, which
// ignores destination conditions too, is left atomic here so that the
// store is lease-free but for DeleteObjects).
func NewEntryETagIgnoringStore(inner http.Handler) http.Handler {
	return &conditionalStore{inner: inner, keys: map[string]*keyHistory{}, quirks: storeQuirks{ignoresEntryETags: true}}
}

// NewUnquotedIfMatchStore stands for Ceph RGW 16.2.15's PutObject If-Match,
// right only with the ETag unquoted (a quoted one, as the SDKs send, is
// 412); RGW's other conditions, ignored there, are atomic here, so that the
// store is lease-free but for that quirk. The probe calls put_if_match
// partial with remedy unquoted_etag.
func NewUnquotedIfMatchStore(inner http.Handler) http.Handler {
	return &conditionalStore{inner: inner, keys: map[string]*keyHistory{}, quirks: storeQuirks{matchesUnquotedOnly: true}}
}

// NewRacyDeleteSizeTimeIgnoringStore is the negative control of the
// reduced DeleteObject: NewSizeTimeIgnoringStore whose DeleteObject If-Match
// (the one check the reduction relies on) is checked, then the object
// deleted, not atomically with a concurrent PutObject; the probe's races
// of DeleteObject against PutObject If-Match lose every time.
func NewRacyDeleteSizeTimeIgnoringStore(inner http.Handler) http.Handler {
	return &conditionalStore{inner: inner, keys: map[string]*keyHistory{}, racy: opDelete,
		forced: []string{"/race-delete-cas-vs-put-cas-"}, quirks: storeQuirks{ignoresDeleteSizeTime: true}}
}

// NewRacyDeleteEntryETagIgnoringStore is the negative control of
// DeleteObjects entries sent as DeleteObject: NewEntryETagIgnoringStore
// whose DeleteObject If-Match races PutObject as above.
func NewRacyDeleteEntryETagIgnoringStore(inner http.Handler) http.Handler {
	return &conditionalStore{inner: inner, keys: map[string]*keyHistory{}, racy: opDelete,
		forced: []string{"/race-delete-cas-vs-put-cas-"}, quirks: storeQuirks{ignoresEntryETags: true}}
}

// apply changes r as the quirky store reads it, before its check.
func (q storeQuirks) apply(r *http.Request, op string) {
	if q.ignoresDeleteSizeTime && op == opDelete {
		r.Header.Del("X-Amz-If-Match-Size")
		r.Header.Del("X-Amz-If-Match-Last-Modified-Time")
	}
	if q.matchesUnquotedOnly && op == opPut {
		if v := r.Header.Get("If-Match"); v != "" && v != "*" && strings.HasPrefix(strings.TrimPrefix(v, "W/"), `"`) {
			r.Header.Set("If-Match", `"quoted: never matches"`)
		}
	}
}

// entryETag is the ETag the store checks of a DeleteObjects entry.
func (q storeQuirks) entryETag(etag string) string {
	if q.ignoresEntryETags {
		return ""
	}
	return etag
}

// NewQuirkyStore stands for a store with both of SeaweedFS 4.53's and
// versitygw v1.8.0's DeleteObjects quirks at once: DeleteObject ignores
// x-amz-if-match-size and -last-modified-time, DeleteObjects ignores entry
// ETags; DeleteObject If-Match, PutObject, CopyObject and
// CompleteMultipartUpload conditions are atomic. Lease-free under auto by
// two reductions to DeleteObject If-Match, the one check they rely on.
func NewQuirkyStore(inner http.Handler) http.Handler {
	return &conditionalStore{inner: inner, keys: map[string]*keyHistory{},
		quirks: storeQuirks{ignoresDeleteSizeTime: true, ignoresEntryETags: true}}
}

// NewQuirkyStoreRacingLater is the negative control of NewQuirkyStore's
// reductions: NewQuirkyStore when s3cond starts (and probes it), then,
// after BecomeRacy, a DeleteObject If-Match checked and, gap later, done,
// not atomically with a PutObject committed in the gap (as SeaweedFS's
// DeleteObjects entries were, issue 33). gap stands for a store slow
// between its check and its write, so that a history meets the race.
func NewQuirkyStoreRacingLater(gap time.Duration) *RacyLaterStore {
	return &RacyLaterStore{before: NewQuirkyStore, after: func(inner http.Handler) http.Handler {
		return &conditionalStore{inner: inner, keys: map[string]*keyHistory{}, racy: opDelete, racyGap: gap,
			quirks: storeQuirks{ignoresDeleteSizeTime: true, ignoresEntryETags: true}}
	}}
}

package admin

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
)

// LeaseReleasePath is where the admin listener releases a lease row of the
// lease store only this process can write (the embedded lease file it
// holds, or its memory table), for `s3cond leases release` while it runs:
// POST /leases/release?path=BUCKET/KEY&etag=E&generation=N with
// "Authorization: Bearer <token>", the token of data_dir/admin-token.
const LeaseReleasePath = "/leases/release"

// Bounds on a release request: everything in it comes from whoever
// reaches the listener. A lease path is a bucket (63 bytes) and an S3 key
// (1024 bytes); an ETag is a quoted hash.
const (
	maxReleaseQuery = 8 << 10
	maxReleasePath  = 2048
	maxReleaseETag  = 256
)

// LeaseReleaseAnswer is the body of every answer of POST /leases/release
// (JSON). With 200 Row is the row as released (its generation is the one
// asked for when it was already released, nothing written); with 409 it is
// the row as it now is, left alone because it moved on.
type LeaseReleaseAnswer struct {
	Row   *LeaseRow `json:"row,omitempty"`
	Error string    `json:"error,omitempty"`
}

// releaseRequest is a validated release.
type releaseRequest struct {
	path, etag string
	generation uint64
}

// ReleaseHandler serves POST /leases/release on table, the process's own
// lease table, for callers presenting token. A release is
// dynamolease.ReleaseRow, the conditional replace that never frees a row
// renewed or taken over since the operator read its generation.
func ReleaseHandler(table dynamolease.Table, token string, log zerolog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			answerRelease(w, http.StatusMethodNotAllowed, LeaseReleaseAnswer{Error: "release is POST"})
			return
		}
		// Before anything else is looked at: without the token, a request
		// learns nothing but that it lacks it.
		if !bearerMatches(r.Header.Values("Authorization"), token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="s3cond admin"`)
			answerRelease(w, http.StatusUnauthorized, LeaseReleaseAnswer{
				Error: "release needs Authorization: Bearer <the token in data_dir/" + TokenFileName + ">"})
			return
		}
		if r.ContentLength != 0 {
			// Everything is in the query; a body (of any length, or
			// chunked) is a client we do not know.
			answerRelease(w, http.StatusRequestEntityTooLarge, LeaseReleaseAnswer{Error: "release takes no body"})
			return
		}
		req, problem := parseRelease(r.URL.RawQuery)
		if problem != "" {
			answerRelease(w, http.StatusBadRequest, LeaseReleaseAnswer{Error: problem})
			return
		}
		row, err := dynamolease.ReleaseRow(r.Context(), table, req.path, req.etag, req.generation)
		status := releaseStatus(err)
		event := log.Info()
		if status != http.StatusOK {
			event = log.Warn().Err(err)
		}
		event.Str("path", req.path).Str("etag", req.etag).Uint64("generation", req.generation).
			Str("remote", r.RemoteAddr).Int("status", status).Msg("lease release through the admin listener")
		answer := LeaseReleaseAnswer{}
		if row != nil {
			listed := RowFromRecord(*row)
			answer.Row = &listed
		}
		if err != nil {
			answer.Error = err.Error()
		}
		answerRelease(w, status, answer)
	})
}

// bearerMatches reports whether the one Authorization header is
// "Bearer <token>", in time independent of where a wrong token differs.
func bearerMatches(headers []string, token string) bool {
	if len(headers) != 1 || token == "" {
		return false
	}
	scheme, presented, ok := strings.Cut(headers[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(presented), []byte(token)) == 1
}

// parseRelease validates the query: path, etag and generation, each once.
// It returns a problem to answer with 400, or "".
func parseRelease(rawQuery string) (releaseRequest, string) {
	if len(rawQuery) > maxReleaseQuery {
		return releaseRequest{}, "query too long"
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return releaseRequest{}, "malformed query"
	}
	for name, values := range q {
		if name != "path" && name != "etag" && name != "generation" {
			return releaseRequest{}, "unknown parameter (release takes path, etag, generation)"
		}
		if len(values) != 1 {
			return releaseRequest{}, name + " given more than once"
		}
	}
	req := releaseRequest{path: q.Get("path"), etag: q.Get("etag")}
	bucket, key, _ := strings.Cut(req.path, "/")
	switch {
	case len(req.path) > maxReleasePath:
		return req, "path too long"
	case bucket == "" || key == "" || !utf8.ValidString(req.path):
		return req, "path must be BUCKET/KEY, in UTF-8"
	case req.etag == "" || len(req.etag) > maxReleaseETag || !utf8.ValidString(req.etag):
		return req, `etag must be the row's expected ETag ("*" for a create), at most 256 bytes of UTF-8`
	}
	// Base 10: no sign, no prefix, no underscores, one spelling per number.
	req.generation, err = strconv.ParseUint(q.Get("generation"), 10, 64)
	if err != nil {
		return req, "generation must be a decimal number below 2^64"
	}
	return req, ""
}

// releaseStatus is the HTTP status of ReleaseRow's outcome.
func releaseStatus(err error) int {
	switch {
	case err == nil:
		return http.StatusOK
	case errors.Is(err, dynamolease.ErrReleaseGeneration):
		return http.StatusConflict
	case errors.Is(err, dynamolease.ErrNoLeaseRow):
		return http.StatusNotFound
	default:
		return http.StatusServiceUnavailable
	}
}

func answerRelease(w http.ResponseWriter, status int, answer LeaseReleaseAnswer) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(answer)
}

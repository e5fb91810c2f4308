package testservers

import (
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
)

// deleteObjectsRequest is the part of a DeleteObjects body the store reads.
type deleteObjectsRequest struct {
	Objects []struct {
		Key  string `xml:"Key"`
		ETag string `xml:"ETag"`
	} `xml:"Object"`
}

type deleteEntryResult struct {
	Key     string `xml:"Key"`
	Code    string `xml:"Code,omitempty"`
	Message string `xml:"Message,omitempty"`
}

type deleteObjectsResult struct {
	XMLName xml.Name            `xml:"http://s3.amazonaws.com/doc/2006-03-01/ DeleteResult"`
	Deleted []deleteEntryResult `xml:"Deleted"`
	Errors  []deleteEntryResult `xml:"Error"`
}

// serveDeleteObjects deletes each entry as a DeleteObject with If-Match
// of its ETag would, and answers S3's DeleteResult.
func (s *conditionalStore) serveDeleteObjects(w http.ResponseWriter, r *http.Request) {
	var req deleteObjectsRequest
	if err := xml.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
		http.Error(w, "MalformedXML", http.StatusBadRequest)
		return
	}
	bucket := "/" + strings.Trim(r.URL.Path, "/")
	var res deleteObjectsResult
	for _, o := range req.Objects {
		entry := deleteEntryResult{Key: o.Key}
		if status := s.deleteEntry(r, bucket+"/"+o.Key, s.quirks.entryETag(o.ETag)); status != 0 {
			entry.Code, entry.Message = "PreconditionFailed", "At least one of the pre-conditions you specified did not hold"
			res.Errors = append(res.Errors, entry)
			continue
		}
		res.Deleted = append(res.Deleted, entry)
	}
	out, err := xml.Marshal(res)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/xml")
	_, _ = w.Write(append([]byte(xml.Header), out...))
}

// deleteEntry deletes the object at key if etag (when given) is its ETag:
// under the lock with the check, or in two steps when DeleteObjects is the
// racy operation. It answers 0 when deleted, else the failure status.
func (s *conditionalStore) deleteEntry(r *http.Request, key, etag string) int {
	entry := httptest.NewRequestWithContext(r.Context(), http.MethodDelete, "/", nil)
	entry.URL.Path = key
	if etag != "" {
		entry.Header.Set("If-Match", etag)
	}
	if s.racy != opDeleteObjects || etag == "" {
		s.mu.Lock()
		defer s.mu.Unlock()
		if status := s.check(entry, key); status != 0 {
			return status
		}
		return s.deleteNow(entry, key)
	}
	s.mu.Lock()
	status, h := s.check(entry, key), s.history(key)
	seen := h.others
	s.mu.Unlock()
	if !s.window(r.Context(), key, h, status == 0) {
		return http.StatusRequestTimeout
	}
	if status != 0 {
		return status
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if h.others != seen {
		return http.StatusPreconditionFailed
	}
	return s.deleteNow(entry, key)
}

// deleteNow deletes key in gofakes3; the caller holds s.mu.
func (s *conditionalStore) deleteNow(entry *http.Request, key string) int {
	rec := httptest.NewRecorder()
	s.forward(rec, entry, key, opDeleteObjects)
	if rec.Code >= 300 {
		return rec.Code
	}
	return 0
}

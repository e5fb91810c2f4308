package testservers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/s3cond/s3cond/precondition"
)

// FaultyStoreBucket is the bucket every faulty store serves.
const FaultyStoreBucket = "probe-bucket"

// conditionHeaders are every request header by which a client asks S3 for
// a condition.
var conditionHeaders = []string{
	"If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since",
	"X-Amz-If-Match-Size", "X-Amz-If-Match-Last-Modified-Time",
	"X-Amz-Copy-Source-If-Match", "X-Amz-Copy-Source-If-None-Match",
	"X-Amz-Copy-Source-If-Modified-Since", "X-Amz-Copy-Source-If-Unmodified-Since",
}

func stripConditions(r *http.Request) {
	for _, h := range conditionHeaders {
		r.Header.Del(h)
	}
}

// StartFaultyStore serves gofakes3 (the embedded store's engine, in
// memory, with FaultyStoreBucket) behind fault on a loopback httptest
// server, stops it when the test ends and returns its endpoint. The store
// checks no signatures.
func StartFaultyStore(t testing.TB, fault func(inner http.Handler) http.Handler) string {
	t.Helper()
	be := s3mem.New()
	if err := be.CreateBucket(FaultyStoreBucket); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(fault(gofakes3.New(be).Server()))
	t.Cleanup(srv.Close)
	return srv.URL
}

// IgnoringStore stands for s3rver (and Oracle, as reported): every
// condition header is accepted and dropped, and the operation happens.
func IgnoringStore(inner http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stripConditions(r)
		inner.ServeHTTP(w, r)
	})
}

// headState asks inner for the object r names, as a HEAD.
func headState(inner http.Handler, r *http.Request) (etag string, exists bool) {
	head := httptest.NewRequestWithContext(r.Context(), http.MethodHead, r.URL.Path, nil)
	rec := httptest.NewRecorder()
	inner.ServeHTTP(rec, head)
	return rec.Header().Get("ETag"), rec.Code == http.StatusOK
}

// verdictFor is what S3 answers a write with If-Match / If-None-Match on
// an object in the given state: 0 to go ahead, else the failure status.
func verdictFor(h http.Header, etag string, exists bool) int {
	if h.Get("If-None-Match") == "*" && exists {
		return http.StatusPreconditionFailed
	}
	if want := h.Get("If-Match"); want != "" {
		switch {
		case !exists:
			return http.StatusNotFound
		case want != "*" && !precondition.ETagsEqual(want, etag):
			return http.StatusPreconditionFailed
		}
	}
	return 0
}

func isConditionalWrite(r *http.Request) bool {
	write := r.Method == http.MethodPut && r.URL.Query().Get("partNumber") == "" ||
		r.Method == http.MethodPost && r.URL.Query().Has("uploadId") ||
		r.Method == http.MethodDelete && !r.URL.Query().Has("uploadId")
	return write && (r.Header.Get("If-Match") != "" || r.Header.Get("If-None-Match") != "")
}

// headThenPutStore stands for a store that emulates conditions by checking
// with a HEAD and then writing, as SeaweedFS did until March 2026: right
// one request at a time, wrong under concurrency. The real store loses the
// race by chance; this one loses it every time on the probe's race keys:
// the first two writers of a key both pass the check before either writes.
type headThenPutStore struct {
	inner http.Handler
	mu    sync.Mutex
	gates map[string]chan struct{}
}

func NewHeadThenPutStore(inner http.Handler) http.Handler {
	return &headThenPutStore{inner: inner, gates: map[string]chan struct{}{}}
}

func (s *headThenPutStore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !isConditionalWrite(r) {
		s.inner.ServeHTTP(w, r)
		return
	}
	etag, exists := headState(s.inner, r)
	if status := verdictFor(r.Header, etag, exists); status != 0 {
		http.Error(w, "", status)
		return
	}
	if strings.Contains(r.URL.Path, "/race-") {
		s.pairUp(r.Context(), r.URL.Path)
	}
	stripConditions(r)
	s.inner.ServeHTTP(w, r)
}

// pairUp holds the first checker of key until a second has checked too.
func (s *headThenPutStore) pairUp(ctx context.Context, key string) {
	s.mu.Lock()
	gate, waiting := s.gates[key]
	if !waiting {
		gate = make(chan struct{})
		s.gates[key] = gate
		s.mu.Unlock()
		select {
		case <-gate:
		case <-ctx.Done():
		}
		return
	}
	if gate != nil {
		close(gate)
		s.gates[key] = nil
	}
	s.mu.Unlock()
}

// NewPutOnlyStore stands for MinIO before it honoured If-Match on DeleteObject:
// conditions on PutObject are checked and applied atomically (under a lock),
// DeleteObject drops them.
func NewPutOnlyStore(inner http.Handler) http.Handler { return &putOnlyStore{inner: inner} }

type putOnlyStore struct {
	inner http.Handler
	mu    sync.Mutex
}

func (s *putOnlyStore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	plainPut := r.Method == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") == "" && r.URL.Query().Get("partNumber") == ""
	switch {
	case r.Method == http.MethodDelete:
		stripConditions(r)
	case plainPut && isConditionalWrite(r):
		s.mu.Lock()
		defer s.mu.Unlock()
		etag, exists := headState(s.inner, r)
		if status := verdictFor(r.Header, etag, exists); status != 0 {
			http.Error(w, "", status)
			return
		}
		stripConditions(r)
	case plainPut:
		// Unconditional writes take the lock too, so no check interleaves with them.
		s.mu.Lock()
		defer s.mu.Unlock()
	}
	s.inner.ServeHTTP(w, r)
}

// RefusingStore stands for Backblaze B2: any request with a condition header
// is answered 501 NotImplemented.
func RefusingStore(inner http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, h := range conditionHeaders {
			if r.Header.Get(h) != "" {
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(http.StatusNotImplemented)
				_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>NotImplemented</Code><Message>A header you provided implies functionality that is not implemented.</Message></Error>`))
				return
			}
		}
		inner.ServeHTTP(w, r)
	})
}

package testservers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// conditionalStore evaluates every write condition S3 defines on gofakes3
// under one lock with the write (PutObject, CopyObject and
// CompleteMultipartUpload If-Match / If-None-Match, DeleteObject If-Match
// and its size and time conditions, DeleteObjects entry ETags), as AWS S3
// does, except for the operation racy: its check and its write are two
// steps, atomic with every other write but a concurrent PutObject (its
// second step refuses if anything else committed in between, not if a
// PutObject did). That is how SeaweedFS 4.53 lost writes (issue 33: a
// DeleteObjects entry and a CAS PutObject both won; CopyObject raced
// PutObject). A real store loses such a race by chance; on the race keys
// named by forced this one loses it every time: PutObjects of the key wait
// until the racy operation has checked, and it writes only once one of
// them has committed.
type conditionalStore struct {
	inner  http.Handler
	racy   string
	forced []string
	// ignored is the operation whose conditions are dropped, not checked.
	ignored string
	quirks  storeQuirks // atomicstores_quirks.go
	// racyGap is how long the racy operation waits between its check and
	// its write on keys it is not forced on (zero: none).
	racyGap time.Duration
	// rarely, when set, forces the race on only one round in rarely of each
	// forced race (the rarely-th, 2×rarely-th...), the racy operation atomic
	// on the others: a store that loses a race now and then, deterministically
	// (atomicstores_rare.go).
	rarely int
	// raceRounds counts each forced race's rounds met, and keyRound is
	// the round of each key of them (rarely).
	raceRounds map[string]int
	keyRound   map[string]int
	mu         sync.Mutex
	keys       map[string]*keyHistory
}

// keyHistory counts committed writes of a key, and forces the interleaving
// on race keys.
type keyHistory struct {
	others       int
	checkedOnce  sync.Once
	checked      chan struct{}
	putOnce      sync.Once
	putCommitted chan struct{}
}

// NewAtomicStore stands for a store that honours every write condition
// atomically (AWS S3, and the goal of every store): the probe must find
// every write capability native and recommend native.
func NewAtomicStore(inner http.Handler) http.Handler {
	return &conditionalStore{inner: inner, keys: map[string]*keyHistory{}}
}

// NewRacyDeleteObjectsStore stands for SeaweedFS 4.53's DeleteObjects: an
// entry's ETag is checked, then the object deleted, not atomically with a
// concurrent CAS PutObject on that ETag (issue 33: both won 2 of 30 rounds).
// The probe's races of a DeleteObjects entry against PutObject If-Match
// (keys "race-deletes-cas-vs-put-cas-N") lose every time.
func NewRacyDeleteObjectsStore(inner http.Handler) http.Handler {
	return &conditionalStore{inner: inner, keys: map[string]*keyHistory{}, racy: opDeleteObjects,
		forced: []string{"/race-deletes-cas-vs-put-cas-"}}
}

// NewRacyCopyStore stands for SeaweedFS 4.53's CopyObject: a destination
// If-None-Match / If-Match is checked, then the copy written, not
// atomically with a concurrent PutObject (issue 33: 1 of 40 and 3 of 160).
// The probe's races of CopyObject against PutObject lose every time.
func NewRacyCopyStore(inner http.Handler) http.Handler {
	return &conditionalStore{inner: inner, keys: map[string]*keyHistory{}, racy: opCopy,
		forced: []string{"/race-copy-create-vs-put-create-", "/race-copy-cas-vs-put-cas-"}}
}

const (
	opPut           = "put"
	opCopy          = "copy"
	opComplete      = "complete"
	opDelete        = "delete"
	opDeleteObjects = "deletes"
)

// writeOp names the write r is, or "" for anything else.
func writeOp(r *http.Request) string {
	q := r.URL.Query()
	switch {
	case r.Method == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") != "" && !q.Has("uploadId"):
		return opCopy
	case r.Method == http.MethodPut && !q.Has("uploadId"):
		return opPut
	case r.Method == http.MethodPost && q.Has("uploadId"):
		return opComplete
	case r.Method == http.MethodPost && q.Has("delete"):
		return opDeleteObjects
	case r.Method == http.MethodDelete && !q.Has("uploadId"):
		return opDelete
	}
	return ""
}

func (s *conditionalStore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	op := writeOp(r)
	s.quirks.apply(r, op)
	switch op {
	case "":
		s.inner.ServeHTTP(w, r)
	case opDeleteObjects:
		s.serveDeleteObjects(w, r)
	default:
		s.serveWrite(w, r, op)
	}
}

func (s *conditionalStore) history(key string) *keyHistory {
	h, ok := s.keys[key]
	if !ok {
		h = &keyHistory{checked: make(chan struct{}), putCommitted: make(chan struct{})}
		s.keys[key] = h
	}
	return h
}

func (s *conditionalStore) forcedKey(key string) bool {
	for _, f := range s.forced {
		if strings.Contains(key, f) {
			return s.rarely == 0 || s.rareRound(key, f)
		}
	}
	return false
}

// committed records a write of key; the caller holds s.mu. Only a
// conditional PutObject opens a racy operation's window: the unconditional
// one seeding a race key comes before the race.
func (s *conditionalStore) committed(key, op string, conditional bool) {
	h := s.history(key)
	if op == opPut {
		if conditional {
			h.putOnce.Do(func() { close(h.putCommitted) })
		}
		return
	}
	h.others++
}

// serveWrite serves a one-key write: under the lock with its check, or in
// two steps when op is the racy one.
func (s *conditionalStore) serveWrite(w http.ResponseWriter, r *http.Request, op string) {
	key := r.URL.Path
	if op == s.racy && (s.rarely == 0 || s.forcedKey(key)) {
		s.serveRacyWrite(w, r, op)
		return
	}
	if op == s.ignored {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.forward(w, r, key, op)
		return
	}
	if op == opPut && isConditionalWrite(r) && s.racy != "" && s.forcedKey(key) {
		s.mu.Lock()
		h := s.history(key)
		s.mu.Unlock()
		if !waitFor(r.Context(), h.checked) {
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if status := s.check(r, key); status != 0 {
		http.Error(w, "", status)
		return
	}
	s.forward(w, r, key, op)
}

// forward sends r to gofakes3 without its conditions (checked already) and
// records the write if it succeeded; the caller holds s.mu.
func (s *conditionalStore) forward(w http.ResponseWriter, r *http.Request, key, op string) {
	conditional := isConditionalWrite(r)
	stripConditions(r)
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	s.inner.ServeHTTP(rec, r)
	if rec.status < 300 {
		s.committed(key, op, conditional)
	}
}

// serveRacyWrite checks, lets a PutObject in on a forced key, then writes
// unless a write other than a PutObject committed in between.
func (s *conditionalStore) serveRacyWrite(w http.ResponseWriter, r *http.Request, op string) {
	key := r.URL.Path
	s.mu.Lock()
	status, h := s.check(r, key), s.history(key)
	seen := h.others
	s.mu.Unlock()
	if !s.window(r.Context(), key, h, status == 0) {
		return
	}
	if status != 0 {
		http.Error(w, "", status)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if h.others != seen {
		http.Error(w, "", http.StatusPreconditionFailed)
		return
	}
	s.forward(w, r, key, op)
}

// window is the gap between a racy check and its write. On a forced key it
// lets the waiting PutObjects in and, if the check passed, waits until one
// has committed. It reports false when the request ended meanwhile.
func (s *conditionalStore) window(ctx context.Context, key string, h *keyHistory, passed bool) bool {
	if !s.forcedKey(key) {
		if s.racyGap > 0 && passed {
			t := time.NewTimer(s.racyGap)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return false
			}
		}
		return true
	}
	h.checkedOnce.Do(func() { close(h.checked) })
	return !passed || waitFor(ctx, h.putCommitted)
}

func waitFor(ctx context.Context, ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	}
}

// check is what S3 answers r's conditions on the object at key now: 0 to go
// ahead, else the failure status. The caller holds s.mu.
func (s *conditionalStore) check(r *http.Request, key string) int {
	state, exists := s.head(r.Context(), key)
	if status := verdictFor(r.Header, state.Get("ETag"), exists); status != 0 {
		return status
	}
	if size := r.Header.Get("X-Amz-If-Match-Size"); size != "" && (!exists || size != state.Get("Content-Length")) {
		return http.StatusPreconditionFailed
	}
	if when := r.Header.Get("X-Amz-If-Match-Last-Modified-Time"); when != "" {
		want, err := time.Parse(time.RFC3339, when)
		got, gotErr := http.ParseTime(state.Get("Last-Modified"))
		if err != nil || gotErr != nil || !exists || !want.Equal(got) {
			return http.StatusPreconditionFailed
		}
	}
	return 0
}

// head asks gofakes3 for the object at path, as a HEAD.
func (s *conditionalStore) head(ctx context.Context, path string) (http.Header, bool) {
	req := httptest.NewRequestWithContext(ctx, http.MethodHead, "/", nil)
	req.URL.Path = path
	rec := httptest.NewRecorder()
	s.inner.ServeHTTP(rec, req)
	return rec.Header(), rec.Code == http.StatusOK
}

// statusRecorder remembers the status a handler answered.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(status int) {
	s.status = status
	s.ResponseWriter.WriteHeader(status)
}

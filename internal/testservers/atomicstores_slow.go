package testservers

import (
	"bytes"
	"maps"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"
)

// SlowLoserDelay is how long NewSlowLosersStore keeps a losing conditional
// writer waiting before its refusal: the step SeaweedFS 4.53 waits in.
const SlowLoserDelay = time.Second

// slowLosers answers a conditional write that lost its condition (412,
// 404 or 409, or a DeleteObjects entry that failed PreconditionFailed)
// only after SlowLoserDelay per loser waiting on its path before it (one
// step for the first, two for the second...); every other answer comes at
// once.
type slowLosers struct {
	inner   http.Handler
	mu      sync.Mutex
	waiting map[string]int // losers waiting, per path
}

// NewSlowLosersStore stands for SeaweedFS 4.53 as measured: every write
// condition atomic with its write (Put, Complete, DeleteObject, and here
// also Copy and DeleteObjects, so the probe must call it native), but
// writers contending for one key take its write lock one a second
// (weed/cluster/lock_client.go retries a held lock every second): of 8
// racing creates the last loser answered after about 6 s, so a round
// costs a step per loser, not one step. The start-up probe took 26.6 s
// on it, and timed out at 16 writers × 20 rounds, when it ran its cases
// one after another and its rounds by count; 9.9 s with 8 writers a
// round. The refusal is decided (and the lock released) before the wait.
func NewSlowLosersStore(inner http.Handler) http.Handler {
	return &slowLosers{inner: NewAtomicStore(inner), waiting: map[string]int{}}
}

// queue is how many steps the loser now joining path's queue waits;
// leave takes it off again.
func (s *slowLosers) queue(path string) (steps int, leave func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waiting[path]++
	return s.waiting[path], func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.waiting[path]--; s.waiting[path] == 0 {
			delete(s.waiting, path)
		}
	}
}

func (s *slowLosers) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	op := writeOp(r)
	if op == "" {
		s.inner.ServeHTTP(w, r)
		return
	}
	// A write's answer is small (an error document, a CopyObjectResult, a
	// DeleteResult): held whole so that a loser's can be delayed.
	// Read before the store strips the conditions it checked.
	conditional := r.Header.Get("If-Match") != "" || r.Header.Get("If-None-Match") != ""
	rec := httptest.NewRecorder()
	s.inner.ServeHTTP(rec, r)
	if lostCondition(conditional, op, rec) {
		steps, leave := s.queue(r.URL.Path)
		defer leave()
		timer := time.NewTimer(time.Duration(steps) * SlowLoserDelay)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-r.Context().Done():
			return
		}
	}
	maps.Copy(w.Header(), rec.Header())
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// lostCondition reports whether rec is a conditional writer's refusal.
func lostCondition(conditional bool, op string, rec *httptest.ResponseRecorder) bool {
	if op == opDeleteObjects {
		return bytes.Contains(rec.Body.Bytes(), []byte("<Code>PreconditionFailed</Code>"))
	}
	switch rec.Code {
	case http.StatusPreconditionFailed, http.StatusNotFound, http.StatusConflict:
		return conditional
	}
	return false
}

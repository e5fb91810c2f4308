package testservers

import (
	"bytes"
	"maps"
	"net/http"
	"net/http/httptest"
	"time"
)

// SlowLoserDelay is how long NewSlowLosersStore keeps a losing conditional
// writer waiting before its refusal: the step SeaweedFS 4.53 waits in.
const SlowLoserDelay = time.Second

// slowLosers answers a conditional write that lost its condition (412,
// 404 or 409, or a DeleteObjects entry that failed PreconditionFailed)
// only after SlowLoserDelay; every other answer comes at once.
type slowLosers struct{ inner http.Handler }

// NewSlowLosersStore stands for SeaweedFS 4.53 as measured: every write
// condition atomic with its write (Put, Complete, DeleteObject, and here
// also Copy and DeleteObjects, so the probe must call it native), but a
// writer that loses its condition waits about a second before its 412.
// The start-up probe took 26.6 s on it, and timed out at 16 writers × 20
// rounds, when it ran its cases one after another and its rounds by count.
// The refusal is decided (and the lock released) before the wait, so
// losers wait side by side as on the real store.
func NewSlowLosersStore(inner http.Handler) http.Handler {
	return &slowLosers{inner: NewAtomicStore(inner)}
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
		timer := time.NewTimer(SlowLoserDelay)
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

package probe

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/s3cond/s3cond/internal/testservers"
)

// requestLog records the method, path and query of every request a fake
// store receives.
type requestLog struct {
	mu       sync.Mutex
	requests []string
}

func (l *requestLog) add(r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.requests = append(l.requests, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
}

func (l *requestLog) matching(method, pathPrefix string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var found []string
	for _, r := range l.requests {
		if strings.HasPrefix(r, method+" "+pathPrefix) {
			found = append(found, r)
		}
	}
	return found
}

// Given no probe_bucket, the framing check must not write into a bucket
// the store already has (it may be production data): it creates and
// deletes a scratch bucket instead.
func TestFramingWritesNoFoundBucket(t *testing.T) {
	var log requestLog
	opts := startFake(t, func(inner http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			log.add(r)
			inner.ServeHTTP(w, r)
		})
	})
	opts.Bucket = ""
	r := Framing(context.Background(), opts)
	if r.Verdict != Ignored { // gofakes3 keeps the framing
		t.Fatalf("%s (%s), want ignored", r.Verdict, r.Detail)
	}
	existing := "/" + testservers.FaultyStoreBucket + "/"
	for _, method := range []string{http.MethodPut, http.MethodDelete, http.MethodPost} {
		if touched := log.matching(method, existing); len(touched) > 0 {
			t.Errorf("the check wrote into the store's own bucket: %v", touched)
		}
	}
	if created := log.matching(http.MethodPut, "/s3cond-probe-"); len(created) == 0 {
		t.Fatal("the check created no scratch bucket")
	}
	if deleted := log.matching(http.MethodDelete, "/s3cond-probe-"); len(deleted) == 0 {
		t.Fatal("the check deleted no scratch bucket")
	}
}

// versioningStore stands for a store whose bucket keeps versions: every
// PUT is answered with a version ID. It strips versionId from DELETEs
// before gofakes3 (which keeps no versions) sees them.
func versioningStore(log *requestLog) func(inner http.Handler) http.Handler {
	return func(inner http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			log.add(r)
			switch r.Method {
			case http.MethodPut:
				w.Header().Set("X-Amz-Version-Id", "v-"+strings.ReplaceAll(r.URL.Path, "/", "_"))
			case http.MethodDelete:
				q := r.URL.Query()
				q.Del("versionId")
				r.URL.RawQuery = q.Encode()
			}
			inner.ServeHTTP(w, r)
		})
	}
}

// In a versioned probe_bucket a delete without a version ID only adds a
// delete marker: the check deletes each object by the version it got.
func TestFramingDeletesTheVersionsItWrote(t *testing.T) {
	var log requestLog
	opts := startFake(t, versioningStore(&log))
	Framing(context.Background(), opts)
	puts := log.matching(http.MethodPut, "/"+testservers.FaultyStoreBucket+"/s3cond-probe-")
	deletes := log.matching(http.MethodDelete, "/"+testservers.FaultyStoreBucket+"/s3cond-probe-")
	if len(puts) == 0 || len(deletes) == 0 {
		t.Fatalf("puts %v, deletes %v: the check wrote or deleted nothing", puts, deletes)
	}
	for _, d := range deletes {
		if !strings.Contains(d, "versionId=v-") {
			t.Errorf("delete without the version the store answered: %s", d)
		}
	}
}

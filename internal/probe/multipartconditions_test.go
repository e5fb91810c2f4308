package probe

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
)

// sizeCheckingStore stands for a store that refuses a Complete naming a
// wrong x-amz-mp-object-size with 400, but (first) falters once with a
// transient 503 on the first Complete it receives, as a busy store may.
// Otherwise gofakes3.
func sizeCheckingStore(falterFirst bool) func(inner http.Handler) http.Handler {
	return func(inner http.Handler) http.Handler {
		var completes atomic.Int64
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && r.URL.Query().Has("uploadId") && r.Header.Get("X-Amz-Mp-Object-Size") != "" {
				if completes.Add(1) == 1 {
					if falterFirst {
						http.Error(w, "SlowDown", http.StatusServiceUnavailable)
					} else {
						http.Error(w, "InvalidRequest", http.StatusBadRequest)
					}
					return
				}
			}
			inner.ServeHTTP(w, r)
		})
	}
}

// The wrong size must be refused with a 4xx: a 5xx is no evidence that the
// store checked it, though the right-size Complete after it succeeds.
func TestMPUObjectSizeNeedsARefusal(t *testing.T) {
	if r := CheckMultipartConditions(context.Background(), startFake(t, sizeCheckingStore(false)))[MPUObjectSize]; r.Verdict != Native {
		t.Fatalf("a store refusing the wrong size with 400: %s (%s), want native", r.Verdict, r.Detail)
	}
	if r := CheckMultipartConditions(context.Background(), startFake(t, sizeCheckingStore(true)))[MPUObjectSize]; r.Verdict == Native {
		t.Fatalf("a store answering the wrong size 503: %s (%s), want anything but native", r.Verdict, r.Detail)
	}
}

package app

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/internal/config"
	"github.com/s3cond/s3cond/internal/testservers"
)

// heldCleanup stands for SeaweedFS 4.53 deleting the start-up probe's
// scratch keys (4-5 s for the 125 a probe writes): an atomic store whose
// unconditional DELETEs of race keys (the probe's cleanup; the races' own
// deletes carry If-Match) wait until release closes.
type heldCleanup struct {
	inner     http.Handler
	release   chan struct{}
	arrived   chan struct{}
	deleted   atomic.Int32
	abandoned atomic.Int32
}

func (h *heldCleanup) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodDelete || !strings.Contains(r.URL.Path, "/race-") || r.Header.Get("If-Match") != "" {
		h.inner.ServeHTTP(w, r)
		return
	}
	select {
	case h.arrived <- struct{}{}:
	default:
	}
	select {
	case <-h.release:
		h.inner.ServeHTTP(w, r)
		h.deleted.Add(1)
	case <-r.Context().Done():
		h.abandoned.Add(1)
	}
}

// The start-up probe's verdict does not wait for its scratch keys to be
// deleted: Build returns while the cleanup's deletes are held, none of
// them given up, and Close waits until they are done.
func TestStartupProbeCleanupRunsAfterTheVerdict(t *testing.T) {
	held := &heldCleanup{release: make(chan struct{}), arrived: make(chan struct{}, 1)}
	endpoint := testservers.StartFaultyStore(t, func(inner http.Handler) http.Handler {
		held.inner = testservers.NewAtomicStore(inner)
		return held
	})
	a, err := Build(context.Background(), faultyBackendConfig(t, endpoint, config.ConditionalAuto), zerolog.Nop())
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	<-held.arrived
	if n := held.abandoned.Load(); n != 0 {
		t.Fatalf("%d cleanup deletes given up before Build returned: the start-up waited for its cleanup", n)
	}
	if n := held.deleted.Load(); n != 0 {
		t.Fatalf("%d deletes done while held", n)
	}
	close(held.release)
	if err := a.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if held.deleted.Load() == 0 || held.abandoned.Load() != 0 {
		t.Fatalf("after Close: %d race keys deleted, %d deletes given up; want every one deleted", held.deleted.Load(), held.abandoned.Load())
	}
}

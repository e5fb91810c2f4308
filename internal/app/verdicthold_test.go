package app

import (
	"context"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/internal/config"
	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/probe"
	"github.com/s3cond/s3cond/internal/testservers"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
)

// namedAtomicStore stands for a store that names itself server (as
// `weed server -s3` 4.53 sends "SeaweedFS 30GB 4.53") and wins every race
// the probe runs, as SeaweedFS does in most start-ups (its races are rare).
func namedAtomicStore(server string) func(http.Handler) http.Handler {
	return func(inner http.Handler) http.Handler {
		atomic := testservers.NewAtomicStore(inner)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			atomic.ServeHTTP(&serverNaming{ResponseWriter: w, server: server}, r)
		})
	}
}

// serverNaming sets the Server header as the answer starts: gofakes3 sets
// its own ("AmazonS3") on the way.
type serverNaming struct {
	http.ResponseWriter
	server string
}

func (s *serverNaming) WriteHeader(status int) {
	s.Header().Set("Server", s.server)
	s.ResponseWriter.WriteHeader(status)
}

func (s *serverNaming) Write(b []byte) (int, error) {
	if s.Header().Get("Server") != s.server {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(b)
}

// A store the known-racy table lists (docs/stores.md) leases for the
// capabilities measured racy on it, on a first start with an empty
// data_dir, though every race of this start-up went well. The control is
// TestAutoServesNativeOnAtomicStore: the same store, nameless, is native.
func TestAutoLeasesOnAStoreKnownRacy(t *testing.T) {
	_ = wantAutoMode(t, namedAtomicStore("SeaweedFS 30GB 4.53"), config.ConditionalLease, map[string]string{
		probe.CopyIfNoneMatch: string(probe.Racy), probe.CopyIfMatch: string(probe.Racy),
		probe.DeleteObjectsETag: string(probe.Racy), probe.PutIfMatch: string(probe.Native),
	})
	// versitygw's DeleteObject: no lease-free rule without it.
	_ = wantAutoMode(t, namedAtomicStore("VERSITYGW"), config.ConditionalLease, map[string]string{
		probe.DeleteIfMatch: string(probe.Racy), probe.CopyIfMatch: string(probe.Native),
	})
}

// A capability a probe once found racy stays racy: a later start that
// probes the store again (its Server header changed; reprobe_on_start)
// and wins every race still leases, and keeps the racy finding; only
// deleting the kept verdict (docs/operations.md) measures it afresh.
func TestKeptRacyVerdictIsNeverUpgraded(t *testing.T) {
	endpoint := testservers.StartFaultyStore(t, testservers.NewAtomicStore)
	dataDir := t.TempDir()
	path := verdictPath(dataDir, "default")
	earlier := probe.Report{Capabilities: map[string]probe.Result{}, Recommendation: probe.RecommendLease}
	for _, name := range probe.AllCapabilities {
		earlier.Capabilities[name] = probe.Result{Verdict: probe.Native}
	}
	earlier.Capabilities[probe.CopyIfMatch] = probe.Result{Verdict: probe.Racy, Raced: "lost the race CopyObject If-Match vs PutObject If-Match: round 37"}
	if err := saveVerdict(path, storedVerdict{Backend: "default", ProbedAt: time.Now().UTC(), Report: earlier,
		Store: probe.Identity{Endpoint: endpoint, Bucket: testservers.FaultyStoreBucket, Server: "the store before its upgrade"}}); err != nil {
		t.Fatal(err)
	}
	for _, reprobeOnStart := range []bool{false, true} {
		cfg := faultyBackendConfig(t, endpoint, config.ConditionalAuto)
		cfg.DataDir, cfg.Backend.ReprobeOnStart = dataDir, reprobeOnStart
		a := build(t, cfg)
		if v := metricValue(t, a.Registry, "s3cond_backend_conditional_mode", map[string]string{
			"backend": "default", "configured": "auto", "mode": "lease",
		}); v != 1 {
			t.Errorf("reprobe_on_start %v: not leasing on a store whose copy raced once", reprobeOnStart)
		}
		kept, found, err := loadVerdict(path)
		if err != nil || !found {
			t.Fatalf("the verdict kept: %v, found %v", err, found)
		}
		if r := kept.Report.Capabilities[probe.CopyIfMatch]; r.Verdict != probe.Racy || r.Raced != earlier.Capabilities[probe.CopyIfMatch].Raced {
			t.Errorf("reprobe_on_start %v: kept copy_if_match %+v; want racy, for its round 37", reprobeOnStart, r)
		}
	}
	// Cleared by the operator: the same store is native.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	cfg := faultyBackendConfig(t, endpoint, config.ConditionalAuto)
	cfg.DataDir = dataDir
	a := build(t, cfg)
	wantRule(t, a, operation.CopyObject, leasedwrite.RuleNative)
}

// The background re-probe holds a kept racy finding too: a backend served
// natively whose kept verdict now records a race lost (as a re-probe of
// another moment would have kept it) is switched to leasing by the next
// re-probe, though that re-probe wins every race, and the finding stays
// in the file.
func TestReprobeHoldsAKeptRacyFinding(t *testing.T) {
	cfg := faultyBackendConfig(t, testservers.StartFaultyStore(t, testservers.NewAtomicStore), config.ConditionalAuto)
	cfg.Backend.ReprobeInterval = 20 * time.Millisecond
	path := verdictPath(cfg.DataDir, "default")
	// The first re-probe (native, kept) waits in its hook while the test
	// records the race in the file, so that it cannot write over it.
	var pauseOnce, downOnce sync.Once
	paused, resumed, downgraded := make(chan struct{}), make(chan struct{}), make(chan struct{})
	a, err := buildWith(context.Background(), cfg, zerolog.Nop(), reprobeSettings{raceTime: 200 * time.Millisecond,
		done: func(switched bool) {
			pauseOnce.Do(func() { close(paused) })
			<-resumed
			if switched {
				downOnce.Do(func() { close(downgraded) })
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	if v := metricValue(t, a.Registry, "s3cond_backend_conditional_mode", map[string]string{"backend": "default", "mode": "native"}); v != 1 {
		t.Fatal("the atomic store is not served natively at start")
	}
	<-paused
	kept, found, err := loadVerdict(path)
	if err != nil || !found {
		t.Fatalf("no verdict kept at start: %v", err)
	}
	raced := "lost the race CopyObject If-Match vs PutObject If-Match: round 37"
	r := kept.Report.Capabilities[probe.CopyIfMatch]
	r.Verdict, r.Raced = probe.Racy, raced
	kept.Report.Capabilities[probe.CopyIfMatch] = r
	if err := saveVerdict(path, kept); err != nil {
		t.Fatal(err)
	}
	close(resumed)
	select {
	case <-downgraded:
	case <-time.After(2 * time.Minute):
		t.Fatal("no re-probe held the kept racy finding")
	}
	if now, _, err := loadVerdict(path); err != nil || now.Report.Capabilities[probe.CopyIfMatch].Raced != raced {
		t.Errorf("after the re-probe the kept copy_if_match is %+v (%v); want its race kept", now.Report.Capabilities[probe.CopyIfMatch], err)
	}
}

package probe

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/s3cond/s3cond/internal/testservers"
)

// BenchmarkProbeSlowLosers times the probe, with the start-up defaults, on
// a store standing for SeaweedFS 4.53 (a losing conditional writer waits
// about a second for its 412). The start-up target is 5 s (issue 35):
//
//	go test -run '^$' -bench ProbeSlowLosers -benchtime 1x ./internal/probe/
func BenchmarkProbeSlowLosers(b *testing.B) {
	opts := Options{Endpoint: testservers.StartFaultyStore(b, testservers.NewSlowLosersStore), AccessKeyID: "k", SecretKey: "s",
		PathStyle: true, Bucket: testservers.FaultyStoreBucket}
	for b.Loop() {
		rep, err := Run(context.Background(), opts)
		if err != nil {
			b.Fatal(err)
		}
		if rep.Recommendation != RecommendNative {
			b.Fatalf("recommendation %s (first wanting: %s)", rep.Recommendation, FirstWanting(rep.Capabilities))
		}
	}
}

// raceKeys counts the distinct race keys a connection pool wrote: one per
// round of a race.
type raceKeys struct {
	next http.RoundTripper
	mu   sync.Mutex
	keys map[string]bool
}

func (k *raceKeys) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.Contains(r.URL.Path, "/race-") {
		k.mu.Lock()
		k.keys[r.URL.Path] = true
		k.mu.Unlock()
	}
	return k.next.RoundTrip(r)
}

// On a store whose contending writers take a key one a second (SeaweedFS
// 4.53), a round of 8 writers takes 7 s: rounds start with 2 writers, and
// one of 4 (about 3 s, scaled from the first) does not fit a race of 2 s,
// so each race runs one round of 2, and the verdicts stay native.
func TestProbeBoundsRoundsByTimeOnSlowLosers(t *testing.T) {
	opts := startFake(t, testservers.NewSlowLosersStore)
	opts.Writers, opts.Rounds, opts.RaceTime = DefaultWriters, 20, 2*time.Second
	counted := &raceKeys{next: http.DefaultTransport.(*http.Transport).Clone(), keys: map[string]bool{}}
	opts.NewHTTPClient = func() *http.Client { return &http.Client{Transport: counted} }
	rep := runProbe(t, opts)
	want := map[string]Verdict{AtomicUploads: Native}
	for _, name := range WriteCapabilities {
		want[name] = Native
		if d := rep.Capabilities[name].Detail; strings.Count(d, "writers per round [2] ") != strings.Count(d, "race: ") {
			t.Errorf("%s: %s; want every race one round of 2 writers", name, d)
		}
	}
	wantVerdicts(t, rep, want)
	counted.mu.Lock()
	defer counted.mu.Unlock()
	if n, races := len(counted.keys), len(raceSpecs(nil)); n != races {
		t.Errorf("%d race rounds, want %d (one per race)", n, races)
	}
}

// On a store that answers at once, rounds grow to the full count of
// writers: 2, 4, then 8 for every round after.
func TestProbeRoundsGrowToEveryWriter(t *testing.T) {
	opts := startFake(t, testservers.NewAtomicStore)
	opts.Writers, opts.Rounds, opts.RaceTime = DefaultWriters, 5, time.Minute
	rep := runProbe(t, opts)
	for _, name := range WriteCapabilities {
		if d := rep.Capabilities[name].Detail; !strings.Contains(d, "writers per round [2 4 8×3] ") {
			t.Errorf("%s: %s; want rounds of 2, 4, 8, 8 and 8 writers", name, d)
		}
	}
}

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

// On a store whose losing writers wait a second (SeaweedFS 4.53), rounds
// are bounded by RaceTime, not by Rounds: every round has a loser, so a
// race of 2 s starts at most 3 of its 20, and the verdicts stay native.
func TestProbeBoundsRoundsByTimeOnSlowLosers(t *testing.T) {
	opts := startFake(t, testservers.NewSlowLosersStore)
	opts.Rounds, opts.RaceTime = 20, 2*time.Second
	counted := &raceKeys{next: http.DefaultTransport.(*http.Transport).Clone(), keys: map[string]bool{}}
	opts.NewHTTPClient = func() *http.Client { return &http.Client{Transport: counted} }
	rep := runProbe(t, opts)
	want := map[string]Verdict{AtomicUploads: Native}
	for _, name := range WriteCapabilities {
		want[name] = Native
	}
	wantVerdicts(t, rep, want)
	races := len(raceSpecs(nil))
	maxRounds := int(opts.RaceTime/testservers.SlowLoserDelay) + 1
	counted.mu.Lock()
	defer counted.mu.Unlock()
	if n := len(counted.keys); n < races || n > races*maxRounds {
		t.Errorf("%d race rounds, want between %d (one per race) and %d (%d per race)", n, races, races*maxRounds, maxRounds)
	}
}

package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/s3cond/s3cond/internal/testservers"
)

func runProbe(t *testing.T, opts Options) Report {
	t.Helper()
	rep, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	if err := WriteTable(&table, rep); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + table.String())
	return rep
}

func wantVerdicts(t *testing.T, rep Report, want map[string]Verdict) {
	t.Helper()
	for name, v := range want {
		if got := rep.Capabilities[name]; got.Verdict != v {
			t.Errorf("%s: %s (%s), want %s", name, got.Verdict, got.Detail, v)
		}
	}
}

func TestProbeFindsHeadThenPutStoreRacy(t *testing.T) {
	rep := runProbe(t, startFake(t, testservers.NewHeadThenPutStore))
	wantVerdicts(t, rep, map[string]Verdict{
		PutIfNoneMatch:      Racy,
		PutIfMatch:          Racy,
		CompleteIfNoneMatch: Racy,
		// Its copies and completes check with a HEAD too; the races find it.
		CopyIfNoneMatch: Racy,
		CopyIfMatch:     Racy,
		CompleteIfMatch: Racy,
	})
	if rep.Recommendation != RecommendLease {
		t.Errorf("recommendation %q, want lease", rep.Recommendation)
	}
}

func TestProbeFindsPutOnlyStorePartial(t *testing.T) {
	rep := runProbe(t, startFake(t, testservers.NewPutOnlyStore))
	wantVerdicts(t, rep, map[string]Verdict{
		PutIfNoneMatch: Native,
		PutIfMatch:     Native,
		DeleteIfMatch:  Ignored,
	})
	if rep.Recommendation != RecommendLease || FirstWanting(rep.Capabilities) == "" {
		t.Errorf("recommendation %q, want lease", rep.Recommendation)
	}
}

func TestProbeFindsIgnoringStoreIgnored(t *testing.T) {
	rep := runProbe(t, startFake(t, testservers.IgnoringStore))
	want := map[string]Verdict{}
	for _, name := range AllCapabilities {
		want[name] = Ignored
	}
	want[AtomicUploads] = Native // gofakes3 stores a body once it has all of it
	wantVerdicts(t, rep, want)
	if rep.Recommendation != RecommendLease {
		t.Errorf("recommendation %q, want lease", rep.Recommendation)
	}
}

// A store that writes an upload as it arrives (s3rver) is found in place,
// so s3cond knows its held-back final byte guards nothing there.
func TestProbeFindsInPlaceStore(t *testing.T) {
	rep := runProbe(t, startFake(t, testservers.InPlaceStore))
	if got := rep.Capabilities[AtomicUploads]; got.Verdict != InPlace {
		t.Errorf("atomic_uploads: %s (%s), want in_place", got.Verdict, got.Detail)
	}
}

func TestProbeLeavesNothingUnderItsPrefix(t *testing.T) {
	opts := startFake(t, testservers.IgnoringStore)
	opts.Prefix = "scratch/"
	runProbe(t, opts)
	s := newStore(opts.withDefaults())
	for _, key := range []string{"outside"} {
		if _, err := s.seed(context.Background(), key, "x"); err != nil {
			t.Fatal(err)
		}
	}
	s.prefix = ""
	listed := listKeys(t, s)
	if len(listed) != 1 || listed[0] != "outside" {
		t.Errorf("keys left in the bucket: %v, want only the one written outside the probe", listed)
	}
}

func TestProbeJSONShape(t *testing.T) {
	rep := runProbe(t, startFake(t, testservers.IgnoringStore))
	var buf bytes.Buffer
	if err := WriteJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	var decoded struct {
		Capabilities map[string]struct {
			Verdict string `json:"verdict"`
			Detail  string `json:"detail"`
		} `json:"capabilities"`
		Recommendation string `json:"recommendation"`
	}
	if err := json.Unmarshal(buf.Bytes(), &decoded); err != nil {
		t.Fatal(err)
	}
	if decoded.Recommendation != "lease" || decoded.Capabilities[PutIfNoneMatch].Verdict != "ignored" ||
		!strings.Contains(decoded.Capabilities[PutIfNoneMatch].Detail, "want 412") {
		t.Errorf("JSON report: %s", buf.String())
	}
}

func TestProbeFindsRefusingStoreRefused(t *testing.T) {
	rep := runProbe(t, startFake(t, testservers.RefusingStore))
	for _, name := range []string{PutIfNoneMatch, PutIfMatch, CopyIfMatch, CompleteIfNoneMatch, DeleteIfMatch, ReadConditions, CopySourceCondition} {
		if got := rep.Capabilities[name]; got.Verdict != Refused {
			t.Errorf("%s: %s (%s), want refused", name, got.Verdict, got.Detail)
		}
	}
}

// countingTransport counts the race requests one connection pool carried.
type countingTransport struct {
	next  http.RoundTripper
	races atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.Contains(r.URL.Path, "/race-") {
		c.races.Add(1)
	}
	return c.next.RoundTrip(r)
}

// Racing writers use two connection pools, so a store that serialises per
// connection cannot pass a race by accident.
func TestProbeRacesOnTwoConnectionPools(t *testing.T) {
	opts := startFake(t, testservers.NewPutOnlyStore)
	var pools []*countingTransport
	opts.NewHTTPClient = func() *http.Client {
		pool := &countingTransport{next: http.DefaultTransport.(*http.Transport).Clone()}
		pools = append(pools, pool)
		return &http.Client{Transport: pool}
	}
	runProbe(t, opts)
	if len(pools) != 2 {
		t.Fatalf("%d connection pools, want 2", len(pools))
	}
	for i, pool := range pools {
		if pool.races.Load() == 0 {
			t.Errorf("pool %d carried no racing request", i)
		}
	}
}

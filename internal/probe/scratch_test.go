package probe

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/s3cond/s3cond/internal/testservers"
)

// On a store whose listings ignore `prefix`, the probe deletes exactly
// what it wrote: objects and an upload outside its prefix survive, and
// nothing of its own is left (issue 32, finding 5).
func TestProbeDeletesOnlyWhatItWrote(t *testing.T) {
	ctx := context.Background()
	opts := startFake(t, testservers.PrefixIgnoringStore)
	s := newStore(opts.withDefaults())
	var unrelated []string
	for i := range 5 {
		key := fmt.Sprintf("unrelated-%d", i)
		if _, err := s.seed(ctx, key, "someone else's"); err != nil {
			t.Fatal(err)
		}
		unrelated = append(unrelated, key)
	}
	upload, err := s.startUpload(ctx, s.c(), "unrelated-upload", "someone else's part")
	if err != nil {
		t.Fatal(err)
	}
	rep := runProbe(t, opts)
	if rep.Capabilities[PutIfNoneMatch].Verdict == Error {
		t.Fatalf("the probe could not run: %s", rep.Capabilities[PutIfNoneMatch].Detail)
	}
	if got := listKeys(t, s); !equalSorted(got, unrelated) {
		t.Errorf("keys in the bucket after the probe: %v, want exactly the unrelated %v", got, unrelated)
	}
	if o := s.complete(ctx, s.c(), upload); o.status != 200 {
		t.Errorf("completing the unrelated upload after the probe: %s, want 200 (the probe aborted it?)", o)
	}
}

func equalSorted(got, want []string) bool {
	got, want = append([]string(nil), got...), append([]string(nil), want...)
	sort.Strings(got)
	sort.Strings(want)
	return fmt.Sprint(got) == fmt.Sprint(want)
}

// A store whose listing never ends and whose every other answer is an
// endless error document cannot hold the probe past its time bound nor
// grow its heap past the 64 MiB issue 32 (finding 8) sets: every answer is
// read through a cap, and cleanup lists nothing.
func TestProbeBoundsAHostileStore(t *testing.T) {
	hostile := testservers.NewEndlessAnswerStore()
	rep := probeWithinBounds(t, hostile.Handler)
	select {
	case <-hostile.Listed():
		t.Error("the probe listed the store: it must delete only what it wrote")
	default:
	}
	if got := rep.Capabilities[PutIfNoneMatch].Verdict; got != Error {
		t.Errorf("put_if_none_match on a store that answers nothing readable: %s, want error", got)
	}
}

// The same when the endless answers come only to racing writers, every
// race at once with the default 8 writers: the most requests the probe has
// in flight.
func TestProbeBoundsAStoreHostileInRaces(t *testing.T) {
	rep := probeWithinBounds(t, testservers.EndlessRaceAnswers)
	for _, name := range WriteCapabilities {
		if got := rep.Capabilities[name]; got.Verdict != Error || !strings.Contains(got.Detail, "race") {
			t.Errorf("%s: %s (%s), want an error in its races", name, got.Verdict, got.Detail)
		}
	}
}

// probeWithinBounds probes the fake with the default writers and checks
// the probe ends within its bounds and its heap grows by under 64 MiB.
func probeWithinBounds(t *testing.T, fault func(http.Handler) http.Handler) Report {
	t.Helper()
	opts := startFake(t, fault)
	// Every race's first round at full width: the most requests in flight.
	opts.Timeout, opts.Writers, opts.Rounds, opts.firstRoundWriters = 20*time.Second, DefaultWriters, DefaultRounds, DefaultWriters
	base := heapInUse()
	peak := make(chan uint64)
	done := make(chan struct{})
	go sampleHeap(done, peak)
	started := time.Now()
	rep, err := Run(context.Background(), opts)
	close(done)
	elapsed, most := time.Since(started), <-peak
	grown := most - min(base, most)
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	_ = WriteTable(&table, rep)
	t.Logf("probe of a hostile store: %s, heap grew by at most %d KiB\n%s", elapsed, grown>>10, table.String())
	if bound := opts.Timeout + cleanupTimeout; elapsed > bound {
		t.Errorf("the probe took %s, past its bound %s", elapsed, bound)
	}
	if grown > 64<<20 {
		t.Errorf("the heap grew by %d MiB, past 64 MiB", grown>>20)
	}
	return rep
}

func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// sampleHeap reports the largest HeapInuse it saw until done is closed;
// the sampling is a measurement, not a wait for an event.
func sampleHeap(done <-chan struct{}, peak chan<- uint64) {
	var most uint64
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		most = max(most, heapInUse())
		select {
		case <-done:
			peak <- most
			return
		case <-tick.C:
		}
	}
}

// A store that never answers holds the probe no longer than its time
// bound and cleanup's (half as long): every request waits under them.
func TestProbeBoundsASilentStore(t *testing.T) {
	opts := startFake(t, testservers.SilentStore)
	opts.Timeout = time.Second
	started := time.Now()
	rep, err := Run(context.Background(), opts)
	elapsed := time.Since(started)
	if err != nil {
		t.Fatal(err)
	}
	// The bound is 1.5 s; the margin covers a loaded machine's scheduling.
	if bound := opts.Timeout*3/2 + 2*time.Second; elapsed > bound {
		t.Errorf("the probe of a silent store took %s, past %s", elapsed, bound)
	}
	if got := rep.Capabilities[PutIfNoneMatch].Verdict; got != Error {
		t.Errorf("put_if_none_match on a silent store: %s, want error", got)
	}
}

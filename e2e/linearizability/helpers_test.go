package linearizability

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/s3cond/s3cond/internal/testservers"
)

// TestMain stops the moto shared by the tests that do not restart it.
func TestMain(m *testing.M) {
	code := m.Run()
	if shared.process != nil {
		shared.process.Stop()
	}
	os.Exit(code)
}

// shared is one moto for every test that only needs a lease table (each
// gets its own table): importing moto takes many seconds here.
var shared struct {
	once    sync.Once
	process *testservers.Process
	moto    *Moto
	err     error
}

func sharedMoto(t testing.TB) *Moto {
	t.Helper()
	testservers.Require(t, "moto")
	shared.once.Do(func() {
		addr := testservers.FreeAddr(t)
		shared.process, shared.err = testservers.StartProcess(testservers.MotoSpec(addr))
		shared.moto = &Moto{Endpoint: "http://" + addr, addr: addr, process: shared.process}
	})
	if shared.err != nil {
		t.Fatalf("start shared moto: %v", shared.err)
	}
	return shared.moto
}

var tableSeq struct {
	mu sync.Mutex
	n  int
}

// uniqueTable names a fresh lease table on the shared moto.
func uniqueTable() string {
	tableSeq.mu.Lock()
	defer tableSeq.mu.Unlock()
	tableSeq.n++
	return fmt.Sprintf("s3cond-leases-%d", tableSeq.n)
}

// recordingTime is how long a test records: short for CI, or
// $S3COND_SOAK_DURATION (scripts/soak.sh).
func recordingTime(t testing.TB, ci time.Duration) time.Duration {
	t.Helper()
	if v := os.Getenv("S3COND_SOAK_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("S3COND_SOAK_DURATION=%q: %v", v, err)
		}
		return d
	}
	return ci
}

// record runs w for at least d while faults (may be nil) injects faults.
// faults gets a context that ends after d; the recording goes on until
// faults has returned and then for tail more, so every history ends with
// operations on a healed system.
func record(t testing.TB, w Workload, d time.Duration, faults func(ctx context.Context)) *Recorder {
	t.Helper()
	const tail = 2 * time.Second
	rec := NewRecorder()
	faultCtx, cancelFaults := context.WithTimeout(context.Background(), d)
	defer cancelFaults()
	runCtx, stop := context.WithCancel(context.Background())
	defer stop()
	go func() {
		if faults != nil {
			faults(faultCtx)
		}
		<-faultCtx.Done()
		time.Sleep(tail)
		stop()
	}()
	counters := w.Run(runCtx, rec)
	if n := counters.Unexpected.Load(); n > 0 {
		t.Errorf("%d answers outside the contract, e.g. %q", n, counters.Samples())
	}
	if samples := counters.AmbiguousSamples(); len(samples) > 0 {
		t.Logf("ambiguous outcomes, e.g. %q", samples)
	}
	if n := counters.Garbled.Load(); n > 0 {
		t.Errorf("%d GETs returned a body no client wrote", n)
	}
	return rec
}

// requireProgress fails a test whose history is too thin to mean anything.
func requireProgress(t testing.TB, rec *Recorder, minWrites int) {
	t.Helper()
	if s := rec.Stats(); s.SuccessfulWrites < minWrites {
		t.Fatalf("only %d successful writes (want ≥ %d): %s", s.SuccessfulWrites, minWrites, s)
	}
}

// sleepCtx waits d or until ctx ends; false if ctx ended.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// scrapeCounts reads an s3cond's /metrics at url once and returns, for
// each prefix, the sum of the values of the exposition lines that start
// with it (every label set of a series, or one when the prefix names it).
func scrapeCounts(tb testing.TB, url string, prefixes ...string) []int64 {
	tb.Helper()
	resp, err := http.Get(url)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	sums := make([]int64, len(prefixes))
	scan := bufio.NewScanner(resp.Body)
	for scan.Scan() {
		line := scan.Text()
		for i, prefix := range prefixes {
			if !strings.HasPrefix(line, prefix) {
				continue
			}
			fields := strings.Fields(line)
			v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
			if err != nil {
				tb.Fatalf("metrics line %q: %v", line, err)
			}
			sums[i] += int64(v)
		}
	}
	if err := scan.Err(); err != nil {
		tb.Fatal(err)
	}
	return sums
}

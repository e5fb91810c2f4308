package admin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Probe checks that one dependency answers. It must honour ctx's deadline.
type Probe struct {
	Name  string
	Check func(ctx context.Context) error
}

// Readiness runs its probes with a short timeout and caches the result, so a
// load balancer polling every second costs the dependencies one probe per
// cache period per process.
type Readiness struct {
	probes   []Probe
	timeout  time.Duration
	cacheFor time.Duration
	now      func() time.Time

	mu       sync.Mutex // held while probing: concurrent callers share one probe
	last     Report
	checked  time.Time
	draining bool
}

// errDraining is the /readyz answer once shutdown has begun.
var errDraining = errors.New("shutting down: finishing the requests in flight")

// Drain makes every later Check report not ready, so load balancers stop
// sending new requests while the ones in flight finish.
func (r *Readiness) Drain() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.draining = true
}

// NewReadiness returns a Readiness over probes; each probe gets timeout, and
// a result is reused for cacheFor.
func NewReadiness(timeout, cacheFor time.Duration, probes ...Probe) *Readiness {
	return &Readiness{probes: probes, timeout: timeout, cacheFor: cacheFor, now: time.Now}
}

// Report is the outcome of one round of probes.
type Report struct {
	Results []ProbeResult
}

// ProbeResult is one probe's outcome; Err is nil when the dependency answered.
type ProbeResult struct {
	Name string
	Err  error
}

// Ready reports whether every probe passed.
func (r Report) Ready() bool {
	for _, p := range r.Results {
		if p.Err != nil {
			return false
		}
	}
	return true
}

// String is the /readyz body: a verdict, then one line per probe.
func (r Report) String() string {
	var b strings.Builder
	if r.Ready() {
		b.WriteString("ready\n")
	} else {
		b.WriteString("not ready\n")
	}
	for _, p := range r.Results {
		if p.Err != nil {
			fmt.Fprintf(&b, "%s: %v\n", p.Name, p.Err)
		} else {
			fmt.Fprintf(&b, "%s: ok\n", p.Name)
		}
	}
	return b.String()
}

// Check returns the cached report, or probes every dependency in parallel
// when the cache is older than cacheFor.
func (r *Readiness) Check(ctx context.Context) Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.draining {
		return Report{Results: []ProbeResult{{Name: "server", Err: errDraining}}}
	}
	if !r.checked.IsZero() && r.now().Sub(r.checked) < r.cacheFor {
		return r.last
	}
	results := make([]ProbeResult, len(r.probes))
	var wg sync.WaitGroup
	for i, p := range r.probes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Not the caller's cancellation: a poller hanging up must not
			// leave a "context canceled" failure in the cache.
			probeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.timeout)
			defer cancel()
			results[i] = ProbeResult{Name: p.Name, Err: p.Check(probeCtx)}
		}()
	}
	wg.Wait()
	r.last, r.checked = Report{Results: results}, r.now()
	return r.last
}

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/internal/testkit"
	"github.com/s3cond/s3cond/internal/testservers"
)

// newEtcdFleet is newFleet with the lease store on a three-member etcd
// cluster (set through S3COND_* variables: the harness's Config has no etcd
// section, and every key has a variable).
func newEtcdFleet(t *testing.T, backend BackendKind, opts ...Option) (*Env, []*s3.Client) {
	t.Helper()
	if TargetMode() == ModeDirect {
		t.Skip("races between s3cond processes need s3cond; S3COND_E2E_TARGET=direct runs clients against versitygw")
	}
	etcd := testservers.StartEtcdCluster(t)
	e := NewEnv(t, append([]Option{WithBackend(backend), WithProxies(3), WithProcessEnv(
		"S3COND_LEASE_STORE=etcd",
		"S3COND_LEASE_ETCD_ENDPOINTS="+strings.Join(etcd.Endpoints(), ","),
		"S3COND_LEASE_ETCD_REQUEST_TIMEOUT=2s",
	)}, opts...)...)
	var clients []*s3.Client
	for _, p := range e.Proxies {
		clients = append(clients, e.ClientAt(t, p.Endpoint, e.RW))
	}
	CreateBucket(t, clients[0], "race")
	return e, clients
}

// The race suite of races_test.go, on etcd.
func TestEtcdRaceCreate(t *testing.T)     { raceCreate(t, newEtcdFleet, BackendVersityGW) }
func TestEtcdRaceCASCounter(t *testing.T) { raceCASCounter(t, newEtcdFleet, BackendVersityGW) }
func TestEtcdRaceDeleteVersusPut(t *testing.T) {
	raceDeleteVersusPut(t, newEtcdFleet, BackendVersityGW)
}
func TestEtcdKilledHolder(t *testing.T) { testKilledHolder(t, newEtcdFleet) }

// TestEtcdCASCounterWithProcessKilled: workers increment a counter through
// three processes (read, then If-Match PUT of n+1) while one process is
// SIGKILLed and restarted. A write whose answer was lost with the process
// may or may not have landed; every answered success must be a distinct
// increment (two successes writing the same n+1 are a lost update), and the
// counter ends between the successes and the successes plus the unknowns.
func TestEtcdCASCounterWithProcessKilled(t *testing.T) {
	e, clients := newEtcdFleet(t, BackendVersityGW, WithConfig(func(c *Config) {
		c.Lease.Timeout = "2s"
		c.Lease.MaxClockSkewRate = 2
	}))
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	putBytes(t, ctx, clients[0], "race", "counter", []byte("0"))
	const workers, increments, killAt = 6, 150, 40
	var tally casTally
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for tally.successes() < increments && ctx.Err() == nil {
				tally.increment(ctx, t, w, clients[w%len(clients)])
			}
		}()
	}
	// Kill process 2 (workers 2 and 5 use it) while the counter climbs.
	succeeded := 0
	tally.outcomes.WaitForContext(ctx, t, fmt.Sprint(killAt, " successful increments"), func(o casOutcome) bool {
		if o == casSucceeded {
			succeeded++
		}
		return succeeded >= killAt
	})
	before := len(tally.outcomes.All())
	e.Proxies[2].Process.Kill()
	// Down until the traffic has met it, so the kill is what is tested.
	seen := 0
	tally.outcomes.WaitForContext(ctx, t, "a request through the killed process", func(o casOutcome) bool {
		seen++
		return seen > before && (o == casUnknown || o == casNoAnswer)
	})
	e.Proxies[2].Restart(t)
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatalf("the workers did not finish: %s", tally.String())
	}
	final, err := strconv.Atoi(string(getBytes(t, ctx, e.BackendClient(), "race", "counter")))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("counter %d after %s", final, tally.String())
	tally.requireNoLostUpdate(t, final)
}

// casTally records the outcome of every increment.
type casTally struct {
	mu        sync.Mutex
	succeeded map[int]int // value written -> worker
	unknown   int
	conflicts int
	failedGet int // reads that got no answer: the killed process

	outcomes testkit.Events[casOutcome] // each as it happens, for the test to wait on
}

// casOutcome is how one increment ended.
type casOutcome string

const (
	casSucceeded casOutcome = "succeeded"
	casConflict  casOutcome = "conflict"
	casUnknown   casOutcome = "unknown"   // the write's answer was lost or refused
	casNoAnswer  casOutcome = "no answer" // the read got none
)

func (c *casTally) successes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.succeeded)
}

func (c *casTally) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("%d successful increments, %d with unknown outcome, %d conflicts retried, %d reads without an answer",
		len(c.succeeded), c.unknown, c.conflicts, c.failedGet)
}

// increment reads the counter and writes n+1 if it still holds n.
func (c *casTally) increment(ctx context.Context, t *testing.T, worker int, client *s3.Client) {
	out, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("race"), Key: aws.String("counter")})
	if err != nil {
		c.mu.Lock()
		c.failedGet++
		c.mu.Unlock()
		c.outcomes.Add(casNoAnswer)
		time.Sleep(50 * time.Millisecond) // its process is down: try again
		return
	}
	body, err := io.ReadAll(out.Body)
	out.Body.Close()
	if err != nil {
		return
	}
	n, err := strconv.Atoi(string(body))
	if err != nil {
		t.Errorf("worker %d: counter holds %q", worker, body)
		return
	}
	_, err = client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("race"), Key: aws.String("counter"),
		Body: bytes.NewReader([]byte(strconv.Itoa(n + 1))), IfMatch: out.ETag})
	c.mu.Lock()
	defer c.mu.Unlock()
	switch status := HTTPStatus(err); {
	case err == nil:
		if other, dup := c.succeeded[n+1]; dup {
			t.Errorf("lost update: workers %d and %d both wrote %d", other, worker, n+1)
		}
		if c.succeeded == nil {
			c.succeeded = map[int]int{}
		}
		c.succeeded[n+1] = worker
		c.outcomes.Add(casSucceeded)
	case status == 412 || status == 409:
		c.conflicts++
		c.outcomes.Add(casConflict)
	case status == 0 || status >= 500:
		c.unknown++ // the answer was lost (the process died) or refused (503)
		c.outcomes.Add(casUnknown)
		time.Sleep(50 * time.Millisecond)
	default:
		t.Errorf("worker %d write: %v", worker, err)
	}
}

func (c *casTally) requireNoLostUpdate(t *testing.T, final int) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.unknown+c.failedGet == 0 {
		t.Fatal("no request failed: the kill did not hit the traffic")
	}
	highest := 0
	for v := range c.succeeded {
		highest = max(highest, v)
	}
	if final < highest || final < len(c.succeeded) || final > len(c.succeeded)+c.unknown {
		t.Fatalf("counter is %d after %d distinct successful increments (highest %d) and %d of unknown outcome",
			final, len(c.succeeded), highest, c.unknown)
	}
}

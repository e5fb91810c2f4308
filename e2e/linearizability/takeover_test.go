package linearizability

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/e2e"
	"github.com/s3cond/s3cond/internal/testkit"
)

// s3cond's lease defaults (docs/configuration.md), which these tests run
// with: each request waits at most the wait budget, far less than the
// takeover wait of timeout × skew.
const (
	defaultLeaseTimeout = 20 * time.Second
	defaultSkewRate     = 3
	defaultWaitBudget   = 10 * time.Second
	defaultTakeover     = defaultLeaseTimeout * defaultSkewRate
)

// requireTakeoverWithinBound creates key through client, retrying at once on
// each 409 as a client of a busy key does, and checks the dead holder's
// lease is honoured for timeout × skew from the first attempt and then taken
// over within timeout × skew + wait_budget (docs/correctness.md).
func requireTakeoverWithinBound(t *testing.T, c *Cluster, client *s3.Client, key string) {
	t.Helper()
	start := time.Now()
	conflicts := 0
	for {
		ctx, cancel := context.WithTimeout(context.Background(), defaultWaitBudget+10*time.Second)
		err := create(ctx, client, c.Bucket, key, "taker")
		cancel()
		took := time.Since(start)
		if err == nil {
			t.Logf("took the dead holder's lease over %s after the first attempt, after %d × 409", took, conflicts)
			if took < defaultTakeover {
				t.Fatalf("taken over after %s, before timeout × skew = %s", took, defaultTakeover)
			}
			if bound := defaultTakeover + defaultWaitBudget; took > bound {
				t.Fatalf("taken over after %s; the bound is timeout × skew + wait_budget = %s", took, bound)
			}
			requireBackendValue(t, c, key, "taker")
			return
		}
		if e2e.HTTPStatus(err) != http.StatusConflict {
			t.Fatalf("create %s %s after the holder died: %v; want 409 until the takeover, then success", key, took, err)
		}
		conflicts++
		if took > defaultTakeover+2*defaultWaitBudget {
			t.Fatalf("still 409 after %s (%d attempts): the dead holder's lease is never taken over", took, conflicts)
		}
	}
}

// A holder SIGKILLed with default lease settings: before, every request
// watched the dead row from zero and gave up after its 10 s budget, so the
// key answered 409 until the row's TTL (an hour) — issue 14, item 4.
func TestKilledHolderWithDefaultLeaseSettingsIsTakenOver(t *testing.T) {
	t.Parallel() // a minute of waiting: overlap it with the other slow tests
	t.Run("DynamoDBOtherProcess", func(t *testing.T) {
		t.Parallel()
		c := NewCluster(t, ClusterOptions{Proxies: 2, DynamoDB: true, Moto: sharedMoto(t), Table: uniqueTable(),
			DelayBackend: true, DefaultLease: true})
		killHolder(t, c, "k")
		requireTakeoverWithinBound(t, c, c.Client(1, defaultWaitBudget+10*time.Second), "k")
	})
	t.Run("EmbeddedStoreAfterRestart", func(t *testing.T) {
		t.Parallel()
		c := NewCluster(t, ClusterOptions{DelayBackend: true, DefaultLease: true})
		killHolder(t, c, "k")
		c.Proxies[0].Restart(t) // same data_dir: the bbolt file still holds the lease
		requireTakeoverWithinBound(t, c, c.Client(0, defaultWaitBudget+10*time.Second), "k")
	})
}

// TestLinearizableWhenHolderKilledWithDefaultSettings records a workload
// across a holder's SIGKILL with default lease settings: the dead holder's
// key must come back (a write on it succeeds within timeout × skew +
// wait_budget of the workload's start, never before timeout × skew) and the
// history must stay linearizable. The holder's own create is in the history,
// never returned: the checker may apply it or not.
func TestLinearizableWhenHolderKilledWithDefaultSettings(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Proxies: 2, DynamoDB: true, Moto: sharedMoto(t), Table: uniqueTable(),
		DelayBackend: true, DefaultLease: true})
	rec := NewRecorder()
	rec.Invoke(holderClient, Input{Kind: OpCreate, Key: "k1", Value: "holder"}) // never returns
	killHolder(t, c, "k1")
	c.Proxies[0].Restart(t)

	// Requests wait up to the 10 s wait budget: a 5 s client timeout would
	// turn each 409 into an ambiguous outcome.
	w := Workload{Cluster: c, Keys: threeKeys, Clients: 6, OpTimeout: defaultWaitBudget + 10*time.Second,
		Pace: 50 * time.Millisecond}
	started := rec.Elapsed()
	ctx, stop := context.WithCancel(context.Background())
	go func() {
		defer stop()
		takeover, cancel := context.WithTimeout(ctx, defaultTakeover+defaultWaitBudget)
		defer cancel()
		if testkit.Poll(takeover, func(context.Context) error {
			if _, ok := rec.FirstSuccessfulWrite("k1"); !ok {
				return errors.New("no write of k1 has succeeded")
			}
			return nil
		}) == nil {
			time.Sleep(2 * time.Second) // a little history after the takeover
		}
	}()
	counters := w.Run(ctx, rec)
	if n := counters.Unexpected.Load(); n > 0 {
		t.Errorf("%d answers outside the contract, e.g. %q", n, counters.Samples())
	}
	if n := counters.Garbled.Load(); n > 0 {
		t.Errorf("%d GETs returned a body no client wrote", n)
	}
	at, ok := rec.FirstSuccessfulWrite("k1")
	if !ok {
		t.Fatalf("no write on the dead holder's key succeeded within timeout × skew + wait_budget (%s)",
			defaultTakeover+defaultWaitBudget)
	}
	t.Logf("first write on the dead holder's key succeeded %s after the workload started", at-started)
	if at-started < defaultTakeover {
		t.Fatalf("a write on the dead holder's key succeeded %s after the workload started, before timeout × skew", at-started)
	}
	if bound := defaultTakeover + defaultWaitBudget; at-started > bound {
		t.Fatalf("the dead holder's key came back only %s after the workload started; the bound is %s", at-started, bound)
	}
	requireProgress(t, rec, 10)
	RequireLinearizable(t, rec)
}

// holderClient is the client id of the killed holder's operation.
const holderClient = 1000

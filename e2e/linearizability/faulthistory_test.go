package linearizability

import (
	"context"
	"testing"
	"time"
)

// These tests record a history while a fault hits the system, then check it
// like the baseline: whatever the fault, the history must be linearizable.

var threeKeys = []string{"k1", "k2", "k3"}

func TestLinearizableWhileProxiesAreKilled(t *testing.T) {
	linearizableWhileProxiesAreKilled(t, ClusterOptions{Proxies: 3, DynamoDB: true, Moto: sharedMoto(t), Table: uniqueTable()})
}

// linearizableWhileProxiesAreKilled records 8 clients on three keys through
// the cluster opts describes while one s3cond after another is SIGKILLed
// (its leases stay in the lease store until they expire) and restarted.
func linearizableWhileProxiesAreKilled(t *testing.T, opts ClusterOptions) {
	c := NewCluster(t, opts)
	w := Workload{Cluster: c, Keys: threeKeys, Clients: 8}
	kills := 0
	rec := record(t, w, recordingTime(t, 8*time.Second), func(ctx context.Context) {
		for victim := 1; sleepCtx(ctx, 1500*time.Millisecond); victim = victim%2 + 1 {
			c.KillAndRestart(t, victim, 500*time.Millisecond)
			kills++
		}
	})
	t.Logf("killed and restarted an s3cond process %d times", kills)
	if kills == 0 {
		t.Fatal("no process was killed")
	}
	requireProgress(t, rec, 10)
	RequireLinearizable(t, rec)
}

func TestLinearizableAcrossLeaseStoreRestart(t *testing.T) {
	// Its own moto: this test kills it.
	c := NewCluster(t, ClusterOptions{Proxies: 2, DynamoDB: true})
	w := Workload{Cluster: c, Keys: threeKeys, Clients: 6}
	restarts := 0
	rec := record(t, w, recordingTime(t, 4*time.Second), func(ctx context.Context) {
		for sleepCtx(ctx, 1500*time.Millisecond) {
			c.Moto.Kill()
			time.Sleep(time.Second)
			// moto keeps its tables in memory: the lease table is gone, as
			// if every lease had expired at once (docs/correctness.md).
			c.Moto.Start(t)
			c.CreateLeaseTable(t)
			restarts++
		}
	})
	t.Logf("restarted the lease store %d times", restarts)
	if restarts == 0 {
		t.Fatal("the lease store was never restarted")
	}
	requireProgress(t, rec, 10)
	RequireLinearizable(t, rec)
}

func TestLinearizableWithSlowBackend(t *testing.T) {
	c := NewCluster(t, ClusterOptions{Proxies: 2, DynamoDB: true, Moto: sharedMoto(t), Table: uniqueTable(),
		DelayBackend: true})
	// Latency above the 1 s lease: a write that got its lease spends longer
	// than the lease on the re-check and the upload, so it must renew (or
	// give up) while contenders wait for the lease to expire.
	w := Workload{Cluster: c, Keys: threeKeys, Clients: 6, OpTimeout: 15 * time.Second, BodySize: 256 << 10}
	rec := record(t, w, recordingTime(t, 8*time.Second), func(ctx context.Context) {
		for ctx.Err() == nil {
			c.Delay.SetLatency(700 * time.Millisecond)
			sleepCtx(ctx, 3*time.Second)
			c.Delay.SetLatency(0)
			sleepCtx(ctx, time.Second)
		}
	})
	requireProgress(t, rec, 10)
	RequireLinearizable(t, rec)
}

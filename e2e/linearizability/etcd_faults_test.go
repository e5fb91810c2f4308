package linearizability

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/e2e"
	"github.com/s3cond/s3cond/internal/testservers"
)

// The fleet on a three-member etcd cluster: s3cond processes killed, and
// etcd's own faults (the leader killed, a member stopped, every member
// frozen). Histories must stay linearizable; without quorum, conditional
// writes answer 503 and recover once it is back.

func TestEtcdLinearizableWhileProxiesAreKilled(t *testing.T) {
	linearizableWhileProxiesAreKilled(t, ClusterOptions{Proxies: 3, Etcd: testservers.StartEtcdCluster(t)})
}

func TestEtcdLinearizableWhileLeaderIsKilled(t *testing.T) {
	etcd := testservers.StartEtcdCluster(t)
	c := NewCluster(t, ClusterOptions{Proxies: 3, Etcd: etcd})
	w := Workload{Cluster: c, Keys: threeKeys, Clients: 8}
	kills := 0
	rec := record(t, w, recordingTime(t, 8*time.Second), func(ctx context.Context) {
		for sleepCtx(ctx, 1500*time.Millisecond) {
			leader, err := etcd.Leader(ctx)
			if err != nil {
				continue // still electing one
			}
			leader.Kill()
			kills++
			time.Sleep(time.Second)
			if err := leader.Restart(); err != nil {
				t.Error(err)
				return
			}
		}
	})
	t.Logf("killed the etcd leader %d times: %s", kills, rec.Stats())
	if kills == 0 {
		t.Fatal("the leader was never killed")
	}
	requireProgress(t, rec, 10)
	RequireLinearizable(t, rec)
}

// Two of three members keep quorum: with one stopped, conditional writes
// go on without a single 503.
func TestEtcdOneMemberStopped(t *testing.T) {
	etcd := testservers.StartEtcdCluster(t)
	c := NewCluster(t, ClusterOptions{Proxies: 2, Etcd: etcd})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	follower, err := etcd.Follower(ctx)
	if err != nil {
		t.Fatal(err)
	}
	follower.Stop()
	for i := range 10 {
		key := "one-down-" + string(rune('a'+i))
		if took, err := timedCreate(t, c.Client(i, 15*time.Second), c.Bucket, key, "v"); err != nil {
			t.Fatalf("conditional create %s with one member stopped: %v after %s", key, err, took)
		}
	}

	w := Workload{Cluster: c, Keys: threeKeys, Clients: 6}
	rec := record(t, w, recordingTime(t, 5*time.Second), func(ctx context.Context) {
		if sleepCtx(ctx, 2*time.Second) {
			if err := follower.Restart(); err != nil {
				t.Error(err)
			}
		}
	})
	t.Logf("one member stopped, then back: %s", rec.Stats())
	requireProgress(t, rec, 10)
	RequireLinearizable(t, rec)
}

// Every member SIGSTOPped: no quorum. Conditional writes answer 503
// ServiceUnavailable within a few seconds and reach nothing; unconditional
// traffic goes on; after SIGCONT the next conditional write just works and
// finds no lease left held (with longLease, one would answer 409).
func TestEtcdClusterFrozenAnswers503AndRecovers(t *testing.T) {
	etcd := testservers.StartEtcdCluster(t)
	c := NewCluster(t, ClusterOptions{Proxies: 2, Etcd: etcd, LeaseTimeout: longLease})
	client := c.Client(0, 15*time.Second)
	etag := putValue(t, client, c.Bucket, "existing", "v1", 64)

	etcd.Freeze()
	defer etcd.Thaw()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	start := time.Now()
	err := create(ctx, client, c.Bucket, "fresh", "never")
	e2e.RequireS3Error(t, err, http.StatusServiceUnavailable, "ServiceUnavailable")
	if took := time.Since(start); took > etcdRequestTimeout+3*time.Second {
		t.Fatalf("the conditional write took %s to fail without quorum", took)
	}
	_, err = client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(c.Bucket), Key: aws.String("existing"),
		Body: bytesReader(Body("v2", 64)), IfMatch: aws.String(etag)})
	e2e.RequireS3Error(t, err, http.StatusServiceUnavailable, "ServiceUnavailable")
	putValue(t, c.Client(1, 15*time.Second), c.Bucket, "plain", "p1", 64)
	if _, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(c.Bucket), Key: aws.String("plain")}); err != nil {
		t.Fatalf("GET without quorum: %v", err)
	}
	requireBackendValue(t, c, "fresh", "")
	requireBackendValue(t, c, "existing", "v1")

	etcd.Thaw()
	if err := etcd.WaitLeader(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	requireCreateWithoutLeftoverLease(t, c.Client(1, 15*time.Second), c.Bucket, "fresh", "after")
	requireBackendValue(t, c, "fresh", "after")
}

func TestEtcdLinearizableWhileClusterIsFrozen(t *testing.T) {
	etcd := testservers.StartEtcdCluster(t)
	c := NewCluster(t, ClusterOptions{Proxies: 2, Etcd: etcd})
	w := Workload{Cluster: c, Keys: threeKeys, Clients: 6}
	rec := record(t, w, recordingTime(t, 7*time.Second), func(ctx context.Context) {
		if sleepCtx(ctx, 1500*time.Millisecond) {
			etcd.Freeze()
			time.Sleep(3 * time.Second)
			etcd.Thaw()
		}
	})
	stats := rec.Stats()
	t.Logf("froze the etcd cluster for 3s: %s", stats)
	if stats.ByResult[OutcomeRefused] == 0 {
		t.Errorf("no conditional write was refused with 503 while the cluster was frozen")
	}
	requireProgress(t, rec, 10)
	RequireLinearizable(t, rec)
}

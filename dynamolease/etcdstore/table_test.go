package etcdstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/etcdstore"
	"github.com/s3cond/s3cond/dynamolease/tabletest"
	"github.com/s3cond/s3cond/internal/testservers"
)

func testContext(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// etcdTable is a table on its own prefix of cluster, so tests sharing a
// cluster do not see each other's rows.
func etcdTable(t testing.TB, cluster *testservers.EtcdCluster, opts ...etcdstore.Option) (*etcdstore.Table, *clientv3.Client) {
	t.Helper()
	client, err := etcdstore.NewClient(etcdstore.ClientOptions{Endpoints: cluster.Endpoints()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	prefix := fmt.Sprintf("test/%s/%d/", strings.ReplaceAll(t.Name(), "/", "_"), time.Now().UnixNano())
	return etcdstore.New(client, append([]etcdstore.Option{etcdstore.WithPrefix(prefix)}, opts...)...), client
}

func TestEtcdOnThreeMembers(t *testing.T) {
	cluster := testservers.StartEtcdCluster(t)
	t.Run("Conformance", func(t *testing.T) {
		tbl, _ := etcdTable(t, cluster)
		tabletest.Run(t, func(t *testing.T) dynamolease.Table { return tbl })
	})
	t.Run("RowsExpireThroughEtcdLeases", func(t *testing.T) { testEtcdRowsExpire(t, cluster) })
	t.Run("WritesShareOneEtcdLease", func(t *testing.T) { testEtcdLeaseShared(t, cluster) })
	t.Run("RevokedEtcdLeaseIsReplaced", func(t *testing.T) { testEtcdLeaseRevoked(t, cluster) })
	t.Run("CommittersOfTwoProcessesTakeTurns", func(t *testing.T) { testEtcdTwoCommitters(t, cluster) })
}

// A row whose TTL has passed is deleted by etcd (never before its TTL),
// and the key can then be created afresh, as after DynamoDB's TTL sweep.
func testEtcdRowsExpire(t *testing.T, cluster *testservers.EtcdCluster) {
	tbl, _ := etcdTable(t, cluster)
	ctx := testContext(t, 30*time.Second)
	r := dynamolease.Record{Path: "b/short", ETag: "*", Timeout: time.Second, TTL: time.Now().Add(2 * time.Second), Owner: "short"}
	if _, err := tbl.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	storedTTL := time.Unix(r.TTL.Unix(), 0)
	deadline := time.Now().Add(15 * time.Second)
	for {
		got, err := tbl.Get(ctx, "b/short", "*")
		if err != nil {
			t.Fatal(err)
		}
		if got == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("row still there %s after its TTL", time.Since(storedTTL))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if gone := time.Now(); gone.Before(storedTTL) {
		t.Fatalf("row deleted at %s, before its TTL %s", gone, storedTTL)
	}
	again := dynamolease.Record{Path: "b/short", ETag: "*", Timeout: time.Second, TTL: time.Now().Add(time.Hour), Owner: "again"}
	if existing, err := tbl.Create(ctx, again); err != nil {
		t.Fatalf("Create after expiry = %v, %v; want success", existing, err)
	}
}

// Writes with the usual TTL share one etcd lease that outlives the TTL, so
// a write costs one Raft round trip, not two.
func testEtcdLeaseShared(t *testing.T, cluster *testservers.EtcdCluster) {
	tbl, client := etcdTable(t, cluster)
	ctx := testContext(t, 30*time.Second)
	ttl := time.Now().Add(time.Hour)
	for _, path := range []string{"b/one", "b/two"} {
		if _, err := tbl.Create(ctx, dynamolease.Record{Path: path, ETag: "*", Timeout: time.Second, TTL: ttl}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tbl.Replace(ctx, dynamolease.Record{Path: "b/one", ETag: "*", Generation: 1, Timeout: time.Second, TTL: ttl.Add(time.Second)}, 0); err != nil {
		t.Fatal(err)
	}
	var leases []clientv3.LeaseID
	for _, path := range []string{"b/one", "b/two"} {
		resp, err := client.Get(ctx, tbl.Key(path, "*"))
		if err != nil || len(resp.Kvs) != 1 {
			t.Fatalf("read %s: %v %v", path, resp, err)
		}
		leases = append(leases, clientv3.LeaseID(resp.Kvs[0].Lease))
	}
	if leases[0] == 0 || leases[0] != leases[1] {
		t.Fatalf("rows are attached to etcd leases %v; want one shared lease", leases)
	}
	ttlResp, err := client.TimeToLive(ctx, leases[0])
	if err != nil {
		t.Fatal(err)
	}
	if remaining := time.Duration(ttlResp.TTL) * time.Second; remaining < time.Until(ttl) {
		t.Fatalf("the etcd lease ends in %s, before the rows' TTL (in %s)", remaining, time.Until(ttl).Round(time.Second))
	}
}

// An etcd lease revoked by hand (which deletes its rows) is replaced by the
// next write instead of failing it.
func testEtcdLeaseRevoked(t *testing.T, cluster *testservers.EtcdCluster) {
	tbl, client := etcdTable(t, cluster)
	ctx := testContext(t, 30*time.Second)
	row := func(path string) dynamolease.Record {
		return dynamolease.Record{Path: path, ETag: "*", Timeout: time.Second, TTL: time.Now().Add(time.Hour)}
	}
	if _, err := tbl.Create(ctx, row("b/first")); err != nil {
		t.Fatal(err)
	}
	resp, err := client.Get(ctx, tbl.Key("b/first", "*"))
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("read b/first: %v %v", resp, err)
	}
	if _, err := client.Revoke(ctx, clientv3.LeaseID(resp.Kvs[0].Lease)); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Create(ctx, row("b/second")); err != nil {
		t.Fatalf("Create after the etcd lease was revoked: %v", err)
	}
	if got, err := tbl.Get(ctx, "b/second", "*"); err != nil || got == nil {
		t.Fatalf("b/second after the Create: %v, %v", got, err)
	}
}

// Two committers, as two s3cond processes, on one etcd table: the second
// waits for the first's lease and gets it the moment it is released.
func testEtcdTwoCommitters(t *testing.T, cluster *testservers.EtcdCluster) {
	tbl, _ := etcdTable(t, cluster)
	ctx := testContext(t, 30*time.Second)
	opts := dynamolease.Options{Timeout: 10 * time.Second, PollInterval: 20 * time.Millisecond, WaitBudget: 5 * time.Second}
	first := dynamolease.NewCommitter(tbl, opts, zerolog.Nop())
	second := dynamolease.NewCommitter(tbl, opts, zerolog.Nop())
	held, err := first.Acquire(ctx, "b/k", "*", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		lease, err := second.Acquire(ctx, "b/k", "*", nil)
		if err == nil {
			err = lease.Release(ctx)
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("the second process got the lease while the first held it: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("the second process after the release: %v", err)
	}
}

func TestEtcdUnreachableIsStoreErrorQuickly(t *testing.T) {
	client, err := etcdstore.NewClient(etcdstore.ClientOptions{
		Endpoints: []string{"http://" + testservers.FreeAddr(t)}, DialTimeout: time.Second}) // nothing listens there
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	tbl := etcdstore.New(client, etcdstore.WithCallTimeout(time.Second))
	requireStoreErrorWithin(t, tbl, 3*time.Second)
}

// Without quorum (two of three members dead) a lease write fails as a
// StoreError within the call timeout, and works again once a member is back.
func TestEtcdWithoutQuorumIsStoreErrorQuickly(t *testing.T) {
	cluster := testservers.StartEtcdCluster(t)
	tbl, _ := etcdTable(t, cluster, etcdstore.WithCallTimeout(time.Second))
	ctx := testContext(t, 60*time.Second)
	c := dynamolease.NewCommitter(tbl, dynamolease.Options{}, zerolog.Nop())
	if _, err := c.Acquire(ctx, "b/before", "*", nil); err != nil {
		t.Fatalf("Acquire with quorum: %v", err)
	}
	cluster.Members[1].Kill()
	cluster.Members[2].Kill()
	requireStoreErrorWithin(t, tbl, 3*time.Second)

	cluster.Members[1].Start(t)
	if err := cluster.WaitLeader(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Acquire(ctx, "b/after", "*", nil); err != nil {
		t.Fatalf("Acquire once quorum is back: %v", err)
	}
}

func requireStoreErrorWithin(t *testing.T, tbl dynamolease.Table, within time.Duration) {
	t.Helper()
	c := dynamolease.NewCommitter(tbl, dynamolease.Options{}, zerolog.Nop())
	start := time.Now()
	_, err := c.Acquire(testContext(t, 10*time.Second), fmt.Sprintf("b/%d", start.UnixNano()), "*", nil)
	var storeErr *dynamolease.StoreError
	if !errors.As(err, &storeErr) {
		t.Fatalf("Acquire = %v, want *StoreError", err)
	}
	if took := time.Since(start); took > within {
		t.Fatalf("failing took %s, want ≤ %s", took, within)
	}
	t.Logf("failed in %s: %v", time.Since(start).Round(time.Millisecond), err)
}

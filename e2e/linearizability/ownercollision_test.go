package linearizability

import (
	"github.com/anishathalye/porcupine"

	"context"
	"fmt"
	"testing"
	"time"

	"github.com/s3cond/s3cond/e2e"
	"github.com/s3cond/s3cond/internal/testservers"
)

// replicaHostname is the hostname every s3cond of these tests shares, as
// replicas with host networking or a fixed `hostname:` do.
const replicaHostname = "s3cond-replica"

// TestLinearizableWithReplicasSharingHostnameAndPID: three s3cond processes,
// each PID 1 of its own PID namespace with one hostname (so host:pid is the
// same for all), share a lease table in front of s3rver, which ignores
// conditional headers; one after another is SIGKILLed and restarted in
// place (the same host:pid again). Owners from host and PID alone made two
// of them hold one lease (issue 24, item 1: two 200s in 9/100 races); with
// each process's random token the history stays linearizable.
func TestLinearizableWithReplicasSharingHostnameAndPID(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts func() ClusterOptions
	}{
		{"dynamodb", func() ClusterOptions {
			return ClusterOptions{DynamoDB: true, Moto: sharedMoto(t), Table: uniqueTable()}
		}},
		{"etcd", func() ClusterOptions { return ClusterOptions{Etcd: testservers.StartEtcdCluster(t)} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts()
			opts.Backend, opts.Proxies, opts.ContainerHostname = e2e.BackendS3rver, 3, replicaHostname
			c := NewCluster(t, opts)
			w := Workload{Cluster: c, Keys: threeKeys, Clients: 8}
			restarts := 0
			rec := record(t, w, recordingTime(t, 6*time.Second), func(ctx context.Context) {
				for victim := 1; sleepCtx(ctx, 1500*time.Millisecond); victim = victim%2 + 1 {
					c.KillAndRestart(t, victim, 200*time.Millisecond)
					restarts++
				}
			})
			t.Logf("restarted an s3cond in place %d times: %s", restarts, rec.Stats())
			if restarts == 0 {
				t.Fatal("no process was restarted in place")
			}
			requireProgress(t, rec, 10)
			RequireLinearizable(t, rec)
		})
	}
}

// unsafeOwnerWithoutToken is the build tag of dynamolease's deliberately
// unsafe owners: host:pid/<attempt>, no per-process token.
const unsafeOwnerWithoutToken = "s3cond_unsafe_owner_without_token"

// TestNegativeControlOwnerWithoutToken: the same replicas with owners from
// host and PID alone must be caught as not linearizable, so the test above
// is shown to see owner collisions. The processes start together and their
// attempt counters keep pace, so their owners meet on the same rows. Rows
// are born at generation 0 here too, as when the collision was found: a
// random first generation (dynamolease/generation.go) also tells two
// colliding creates apart, which leaves only their takeovers to collide,
// too seldom for a run this short to show. Takeovers are fenced on the
// generation alone too, as then: the fence on the row seen (owner, TTL,
// timeout; dynamolease/fence.go) also keeps colliding owners apart, and
// with it the control found Ok in 3 of 3 recordings.
func TestNegativeControlOwnerWithoutToken(t *testing.T) {
	c := NewCluster(t, ClusterOptions{DynamoDB: true, Moto: sharedMoto(t), Table: uniqueTable(), Backend: e2e.BackendS3rver,
		Proxies: 3, ContainerHostname: replicaHostname,
		BuildTags: unsafeOwnerWithoutToken + "," + unsafeGenerationZero + "," + unsafeGenerationOnlyTakeover})
	// Owners meet only where the processes' attempt counters are level on
	// one key, which a 6 s recording misses now and then (CI: Ok in 2 of
	// about 10 runs): the control passes once any of a few recordings is
	// Illegal. The safe build is never Illegal, so this still shows the
	// suite sees the collision.
	const recordings = 3
	for i := 1; i <= recordings; i++ {
		// Fresh keys each time: the checker starts every key absent.
		keys := []string{fmt.Sprintf("r%d-k1", i), fmt.Sprintf("r%d-k2", i), fmt.Sprintf("r%d-k3", i)}
		w := Workload{Cluster: c, Keys: keys, Clients: 8}
		rec := record(t, w, 6*time.Second, nil)
		requireProgress(t, rec, 10)
		result := Check(t, rec)
		t.Logf("recording %d: checked %s: %s", i, rec.Stats(), result)
		if result == porcupine.Illegal {
			return
		}
	}
	t.Fatalf("the checker found no recording of %d Illegal for replicas whose owners collide: the suite cannot see the collision", recordings)
}

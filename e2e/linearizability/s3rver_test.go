package linearizability

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/s3cond/s3cond/e2e"
)

// On s3rver, which ignores If-None-Match and If-Match, nothing but s3cond
// orders the conditional writes: these histories are linearizable only
// because of its leases. TestS3rverControlNotLinearizable records the same
// workload straight on s3rver and requires porcupine to reject it.

func TestS3rverOneProxyEmbedded(t *testing.T) {
	c := NewCluster(t, ClusterOptions{Backend: e2e.BackendS3rver})
	w := Workload{Cluster: c, Keys: threeKeys, Clients: 6}
	rec := record(t, w, recordingTime(t, 4*time.Second), nil)
	requireProgress(t, rec, 10)
	RequireLinearizable(t, rec)
}

func TestS3rverThreeProxiesSharedDynamoDB(t *testing.T) {
	c := NewCluster(t, ClusterOptions{Backend: e2e.BackendS3rver, Proxies: 3, DynamoDB: true, Moto: sharedMoto(t), Table: uniqueTable()})
	w := Workload{Cluster: c, Keys: threeKeys, Clients: 6}
	rec := record(t, w, recordingTime(t, 4*time.Second), nil)
	requireProgress(t, rec, 10)
	RequireLinearizable(t, rec)
}

// TestS3rverControlNotLinearizable runs the workload with no s3cond: two
// creates of one key both succeed, CASes overwrite each other, and
// porcupine must find the history illegal.
func TestS3rverControlNotLinearizable(t *testing.T) {
	c := NewCluster(t, ClusterOptions{Backend: e2e.BackendS3rver, Direct: true})
	w := Workload{Cluster: c, Keys: threeKeys, Clients: 6}
	rec := record(t, w, 2*time.Second, nil)
	requireProgress(t, rec, 10)
	result := porcupine.CheckOperationsTimeout(RegisterModel, rec.Operations(), time.Minute)
	t.Logf("straight on s3rver: %s; porcupine: %s", rec.Stats(), result)
	if result != porcupine.Illegal {
		t.Fatalf("porcupine says %s for the history straight on s3rver; the control needs Illegal", result)
	}
}

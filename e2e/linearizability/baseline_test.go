package linearizability

import (
	"testing"
	"time"
)

func TestBaselineThreeProxiesSharedDynamoDB(t *testing.T) {
	c := NewCluster(t, ClusterOptions{Proxies: 3, DynamoDB: true, Moto: sharedMoto(t), Table: uniqueTable()})
	w := Workload{Cluster: c, Keys: []string{"k1", "k2", "k3"}, Clients: 8}
	rec := record(t, w, recordingTime(t, 5*time.Second), nil)
	requireProgress(t, rec, 10)
	RequireLinearizable(t, rec)
}

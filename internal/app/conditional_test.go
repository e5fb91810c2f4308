package app

import (
	"testing"

	"github.com/s3cond/s3cond/internal/config"
	"github.com/s3cond/s3cond/internal/testservers"
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

package app

import (
	"testing"

	"github.com/s3cond/s3cond/internal/config"
	"github.com/s3cond/s3cond/internal/testservers"
)

func TestServesStrictBucket(t *testing.T) {
	named := config.Backend{Buckets: map[string]string{"archive": "archive-2026"}}
	for _, c := range []struct {
		name      string
		lease     config.Lease
		b         config.Backend
		isDefault bool
		want      bool
	}{
		{"conditional-only everywhere", config.Lease{Serialize: config.SerializeConditionalOnly}, config.Backend{}, true, false},
		{"all-writes everywhere", config.Lease{Serialize: config.SerializeAllWrites}, named, false, true},
		{"one strict bucket, default backend", config.Lease{SerializeBuckets: map[string]string{"ledger": config.SerializeAllWrites}}, config.Backend{}, true, true},
		{"one strict bucket, another backend's", config.Lease{SerializeBuckets: map[string]string{"ledger": config.SerializeAllWrites}}, named, false, false},
		{"one strict bucket, this backend's", config.Lease{SerializeBuckets: map[string]string{"archive": config.SerializeAllWrites}}, named, false, true},
		{"a bucket set back to conditional-only", config.Lease{SerializeBuckets: map[string]string{"archive": config.SerializeConditionalOnly}}, named, false, false},
	} {
		if got := servesStrictBucket(c.lease, c.b, c.isDefault); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// On a store atomic for every condition auto serves without leases
// (TestAutoServesNativeOnAtomicStore); where strict mode applies it
// leases, since nothing raced the store's unconditional writes against
// its conditional ones.
func TestAutoLeasesWhereStrictModeApplies(t *testing.T) {
	cfg := faultyBackendConfig(t, testservers.StartFaultyStore(t, testservers.NewAtomicStore), config.ConditionalAuto)
	cfg.Lease.Serialize = config.SerializeAllWrites
	a := build(t, cfg)
	if v := metricValue(t, a.Registry, "s3cond_backend_conditional_mode", map[string]string{
		"backend": "default", "configured": "auto", "mode": config.ConditionalLease,
	}); v != 1 {
		t.Fatalf("s3cond_backend_conditional_mode{auto,lease} = %v, want 1 under strict mode", v)
	}
}

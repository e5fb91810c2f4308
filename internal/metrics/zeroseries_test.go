package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
)

// sumOf adds up every series a counter vector holds.
func sumOf(t *testing.T, c prometheus.Collector) float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 256)
	go func() { c.Collect(ch); close(ch) }()
	var sum float64
	for metric := range ch {
		var out dto.Metric
		if err := metric.Write(&out); err != nil {
			t.Fatal(err)
		}
		sum += out.GetCounter().GetValue()
	}
	return sum
}

// TestAlertedSeriesExistAtZero checks that the series the shipped alerts
// name (deploy/prometheus) are exposed before their first event, so that
// increase() sees that event.
func TestAlertedSeriesExistAtZero(t *testing.T) {
	reg := prometheus.NewRegistry()
	New(reg)
	for name, want := range map[string]int{
		"s3cond_lease_store_errors_total":    len(leaseStoreOps),
		"s3cond_backend_errors_total":        len(backendMethods) * len(backendErrorKinds),
		"s3cond_conditional_writes_total":    len(conditionalOperations) * len(conditionalOutcomes),
		"s3cond_lease_takeovers_total":       len(takeoverKinds),
		"s3cond_signature_failures_total":    len(signatureReasons),
		"s3cond_detached_writes_total":       len(leasedOperations) * len(detachedOutcomes),
		"s3cond_leases_left_to_expire_total": len(leasedOperations),
		"s3cond_leases_lost_total":           1,
	} {
		if got, err := testutil.GatherAndCount(reg, name); err != nil || got != want {
			t.Errorf("%s: %d series at start (%v), want %d", name, got, err, want)
		}
	}
}

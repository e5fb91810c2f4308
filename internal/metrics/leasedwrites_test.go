package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/s3cond/s3cond/proxy"
)

func TestLeasedWriteEndsAreCounted(t *testing.T) {
	m := New(prometheus.NewRegistry())
	m.ObserveLeasedWriteEnd(proxy.WriteEnd{Operation: "CopyObject", ClientLeft: true, Outcome: "completed", Leases: 1})
	m.ObserveLeasedWriteEnd(proxy.WriteEnd{Operation: "DeleteObjects", ClientLeft: false, Outcome: "unknown", Leases: 3})
	if got := testutil.ToFloat64(m.leasedWrites.detached.WithLabelValues("CopyObject", "completed")); got != 1 {
		t.Errorf("detached completed copies = %v, want 1", got)
	}
	if got := sumOf(t, m.leasedWrites.detached); got != 1 {
		t.Errorf("detached writes = %v: a write whose client stayed is not detached", got)
	}
	if got := testutil.ToFloat64(m.leasedWrites.leftToExpire.WithLabelValues("DeleteObjects")); got != 3 {
		t.Errorf("leases left to expire = %v, want 3", got)
	}
}

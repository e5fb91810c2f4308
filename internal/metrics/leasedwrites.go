package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/s3cond/s3cond/proxy"
)

var _ proxy.LeasedWriteObserver = (*Metrics)(nil)

// leasedWriteMetrics count leased writes that outlived their client or whose
// outcome s3cond could not learn.
type leasedWriteMetrics struct {
	detached     *prometheus.CounterVec
	leftToExpire *prometheus.CounterVec
}

func newLeasedWriteMetrics(reg prometheus.Registerer) leasedWriteMetrics {
	m := leasedWriteMetrics{
		detached: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "detached_writes_total",
			Help: "Leased writes whose client hung up before they ended, by operation and outcome: completed (the backend answered; the lease was then released), aborted (the write had not reached the backend: nothing stored, lease released), unknown (no full answer came back: its leases were left to expire).",
		}, []string{"operation", "outcome"}),
		leftToExpire: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "leases_left_to_expire_total",
			Help: "Leases not released because the write they guarded reached the backend and its outcome is unknown (the connection broke, a lease was lost, or the write outlasted its limit), by operation. Each blocks its key until it expires.",
		}, []string{"operation"}),
	}
	reg.MustRegister(m.detached, m.leftToExpire)
	return m
}

// ObserveLeasedWriteEnd implements proxy.LeasedWriteObserver.
func (m *Metrics) ObserveLeasedWriteEnd(e proxy.WriteEnd) {
	if e.ClientLeft {
		m.leasedWrites.detached.WithLabelValues(e.Operation, e.Outcome).Inc()
	}
	if e.Outcome == "unknown" {
		m.leasedWrites.leftToExpire.WithLabelValues(e.Operation).Add(float64(e.Leases))
	}
}

package metrics

import "github.com/prometheus/client_golang/prometheus"

// Listeners and reasons of s3cond_connections_closed_total, created at
// zero (zeroseries.go says why); the reasons are internal/frontconn's.
var (
	connectionListeners    = []string{"s3", "admin"}
	connectionCloseReasons = []string{"idle_shed", "address_cap", "refused"}
)

// Connections counts the connections the listeners' caps close or refuse.
type Connections struct {
	closed map[[2]string]prometheus.Counter
}

// NewConnections creates s3cond_connections_closed_total on reg.
func NewConnections(reg prometheus.Registerer) *Connections {
	vec := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "connections_closed_total",
		Help: "Connections a listener's cap closed or refused, by listener (s3, admin) and reason: idle_shed " +
			"(the one idle longest, for a new one), address_cap (an address's unauthenticated connections), " +
			"refused (past the cap with none idle: 503).",
	}, []string{"listener", "reason"})
	reg.MustRegister(vec)
	c := &Connections{closed: map[[2]string]prometheus.Counter{}}
	for _, listener := range connectionListeners {
		for _, reason := range connectionCloseReasons {
			c.closed[[2]string{listener, reason}] = vec.WithLabelValues(listener, reason)
		}
	}
	return c
}

// Closed returns the counting function for listener's cap
// (frontconn.Limits.Closed); nil when c is.
func (c *Connections) Closed(listener string) func(reason string) {
	if c == nil {
		return nil
	}
	return func(reason string) {
		if counter, ok := c.closed[[2]string{listener, reason}]; ok {
			counter.Inc()
		}
	}
}

package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// requestSeries are the series one (operation, status) pair feeds on every
// request, looked up once (childCache): WithLabelValues hashes its labels
// and searches the vector on each call, four times per request, and
// formats the status.
type requestSeries struct {
	requests prometheus.Counter
	duration prometheus.Observer
	bytesIn  prometheus.Counter
	bytesOut prometheus.Counter
}

type seriesKey struct {
	operation string
	status    int
}

func (m *Metrics) newRequestSeries(key seriesKey) *requestSeries {
	return &requestSeries{
		requests: m.requests.WithLabelValues(key.operation, strconv.Itoa(key.status)),
		duration: m.requestDuration.WithLabelValues(key.operation),
		bytesIn:  m.bytesIn.WithLabelValues(key.operation),
		bytesOut: m.bytesOut.WithLabelValues(key.operation),
	}
}

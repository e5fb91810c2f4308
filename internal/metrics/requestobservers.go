package metrics

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// requestSeries are the series one (operation, status) pair feeds on every
// request, looked up once: WithLabelValues hashes its labels and searches
// the vector on each call, four times per request, and formats the status.
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

// requestSeriesCache maps (operation, status) to its series. Reads take no
// lock: the map is replaced, never changed, when a new pair appears, which
// happens a bounded number of times (operations × statuses seen).
type requestSeriesCache struct {
	mu     sync.Mutex // serialises additions
	series atomic.Pointer[map[seriesKey]*requestSeries]
}

func (c *requestSeriesCache) get(m *Metrics, operation string, status int) *requestSeries {
	key := seriesKey{operation, status}
	if current := c.series.Load(); current != nil {
		if s, ok := (*current)[key]; ok {
			return s
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	current := c.series.Load()
	if current != nil {
		if s, ok := (*current)[key]; ok {
			return s
		}
	}
	s := &requestSeries{
		requests: m.requests.WithLabelValues(operation, strconv.Itoa(status)),
		duration: m.requestDuration.WithLabelValues(operation),
		bytesIn:  m.bytesIn.WithLabelValues(operation),
		bytesOut: m.bytesOut.WithLabelValues(operation),
	}
	next := make(map[seriesKey]*requestSeries, 1)
	if current != nil {
		for k, v := range *current {
			next[k] = v
		}
	}
	next[key] = s
	c.series.Store(&next)
	return s
}

// Package metrics defines s3cond's Prometheus metrics and the adapters that
// feed them: the proxy's per-request observer, the lease protocol's
// observer, an instrumented lease table and an instrumented backend
// transport. Every metric is registered on a registry the caller passes in,
// one per process, so tests can build as many as they like.
package metrics

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/proxy"
	"github.com/s3cond/s3cond/s3err"
)

const namespace = "s3cond"

// durationBuckets span a cached HEAD on a LAN (1 ms) to a large upload or a
// lease wait at the wait budget's limit (20 s).
var durationBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 20, 60}

// Metrics holds every s3cond metric.
type Metrics struct {
	requests          *prometheus.CounterVec
	requestDuration   *prometheus.HistogramVec
	bytesIn           *prometheus.CounterVec
	bytesOut          *prometheus.CounterVec
	conditional       *prometheus.CounterVec
	signatureFailures *prometheus.CounterVec

	leaseAcquires  *prometheus.CounterVec
	leaseWait      *prometheus.HistogramVec
	leaseTakeovers *prometheus.CounterVec
	leaseRenewals  prometheus.Counter
	leasesLost     prometheus.Counter

	leaseStoreDuration *prometheus.HistogramVec
	leaseStoreErrors   *prometheus.CounterVec

	backendDuration *prometheus.HistogramVec
	backendErrors   *prometheus.CounterVec

	leasedWrites leasedWriteMetrics

	// requestSeries caches the per-request series by operation and status.
	requestSeries *childCache[seriesKey, *requestSeries]
	// The children of the vectors fed on every backend request, lease call
	// or conditional write.
	backendDurations    *childCache[string, prometheus.Observer]
	leaseStoreDurations *childCache[string, prometheus.Observer]
	acquireSeries       *childCache[string, acquireSeries]
	conditionalOutcomes *childCache[conditionalKey, prometheus.Counter]
}

// acquireSeries are what one lease acquisition result feeds.
type acquireSeries struct {
	count prometheus.Counter
	wait  prometheus.Observer
}

type conditionalKey struct{ operation, outcome string }

var (
	_ proxy.RequestObserver = (*Metrics)(nil)
	_ dynamolease.Observer  = (*Metrics)(nil)
)

// New creates s3cond's metrics and registers them on reg.
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{}
	m.defineRequestMetrics()
	m.defineLeaseMetrics()
	m.defineBackendMetrics()
	reg.MustRegister(
		m.requests, m.requestDuration, m.bytesIn, m.bytesOut, m.conditional, m.signatureFailures,
		m.leaseAcquires, m.leaseWait, m.leaseTakeovers, m.leaseRenewals, m.leasesLost,
		m.leaseStoreDuration, m.leaseStoreErrors, m.backendDuration, m.backendErrors,
	)
	m.leasedWrites = newLeasedWriteMetrics(reg)
	m.createZeroSeries()
	m.requestSeries = newChildCache(m.newRequestSeries)
	m.backendDurations = newChildCache(func(method string) prometheus.Observer {
		return m.backendDuration.WithLabelValues(method)
	})
	m.leaseStoreDurations = newChildCache(func(op string) prometheus.Observer {
		return m.leaseStoreDuration.WithLabelValues(op)
	})
	m.acquireSeries = newChildCache(func(result string) acquireSeries {
		return acquireSeries{count: m.leaseAcquires.WithLabelValues(result), wait: m.leaseWait.WithLabelValues(result)}
	})
	m.conditionalOutcomes = newChildCache(func(k conditionalKey) prometheus.Counter {
		return m.conditional.WithLabelValues(k.operation, k.outcome)
	})
	return m
}

// defineRequestMetrics makes the series of requests and their answers.
func (m *Metrics) defineRequestMetrics() {
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "requests_total",
		Help: "S3 requests answered, by operation and HTTP status (499: the client hung up before the answer was complete).",
	}, []string{"operation", "status"})
	m.requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Name: "request_duration_seconds",
		Help:    "Time from a request's arrival to the end of its response, by operation.",
		Buckets: durationBuckets,
	}, []string{"operation"})
	m.bytesIn = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "request_body_bytes_total",
		Help: "Verified request body bytes sent on to the backend, by operation.",
	}, []string{"operation"})
	m.bytesOut = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "response_body_bytes_total",
		Help: "Response body bytes sent to clients, by operation.",
	}, []string{"operation"})
	m.conditional = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "conditional_writes_total",
		Help: "Conditional (and strict-mode) writes by operation and outcome: committed, precondition_failed (412), no_such_key (404), conflict (409), not_implemented (501), unavailable (503), client_closed (499: the client hung up), error (anything else).",
	}, []string{"operation", "outcome"})
	m.signatureFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "signature_failures_total",
		Help: "Requests refused while authenticating, by S3 error code.",
	}, []string{"reason"})
}

// defineLeaseMetrics makes the series of leases and the lease store.
func (m *Metrics) defineLeaseMetrics() {
	m.leaseAcquires = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "lease_acquisitions_total",
		Help: "Lease acquisitions by result: acquired, wait_budget_exceeded, store_error, precondition (the re-check failed), cancelled, error.",
	}, []string{"result"})
	m.leaseWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Name: "lease_wait_seconds",
		Help:    "Time spent acquiring a lease (queueing behind other holders included), by result.",
		Buckets: durationBuckets,
	}, []string{"result"})
	m.leaseTakeovers = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "lease_takeovers_total",
		Help: "Lease rows won by bumping their generation: released (the previous holder finished) or stale (it vanished).",
	}, []string{"kind"})
	m.leaseRenewals = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: namespace, Name: "lease_renewals_total",
		Help: "Successful lease renewals (writes running longer than half the lease timeout).",
	})
	m.leasesLost = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: namespace, Name: "leases_lost_total",
		Help: "Held leases found taken over or expired unrenewed; each is a write that may have raced another.",
	})
	m.leaseStoreDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Name: "lease_store_call_duration_seconds",
		Help:    "Lease table calls by operation (create, replace, get; create_batch and replace_batch write many rows in one call).",
		Buckets: durationBuckets,
	}, []string{"op"})
	m.leaseStoreErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "lease_store_errors_total",
		Help: "Lease table calls that failed (a lost conditional write is not a failure), by operation.",
	}, []string{"op"})
}

// defineBackendMetrics makes the series of requests to the backend.
func (m *Metrics) defineBackendMetrics() {
	m.backendDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Name: "backend_request_duration_seconds",
		Help:    "Time until the backend's response headers, by HTTP method.",
		Buckets: durationBuckets,
	}, []string{"method"})
	m.backendErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "backend_errors_total",
		Help: "Backend requests that failed, by method and kind: transport (no response) or status_5xx.",
	}, []string{"method", "kind"})
}

// ObserveRequest implements proxy.RequestObserver.
func (m *Metrics) ObserveRequest(r proxy.RequestRecord) {
	op := r.Operation
	series := m.requestSeries.get(seriesKey{op, r.Status})
	series.requests.Inc()
	series.duration.Observe(r.Duration.Seconds())
	series.bytesIn.Add(float64(r.BytesIn))
	series.bytesOut.Add(float64(r.BytesOut))
	if r.ConditionalOutcome != "" {
		m.conditionalOutcomes.get(conditionalKey{op, r.ConditionalOutcome}).Inc()
	}
	if r.SignatureFailure != "" {
		m.signatureFailures.WithLabelValues(r.SignatureFailure).Inc()
	}
}

// AcquireDone implements dynamolease.Observer.
func (m *Metrics) AcquireDone(wait time.Duration, err error) {
	result := acquireResult(err)
	series := m.acquireSeries.get(result)
	series.count.Inc()
	series.wait.Observe(wait.Seconds())
}

func acquireResult(err error) string {
	var storeErr *dynamolease.StoreError
	switch {
	case err == nil:
		return "acquired"
	case errors.Is(err, dynamolease.ErrWaitBudgetExceeded):
		return "wait_budget_exceeded"
	case errors.As(err, &storeErr):
		return "store_error"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "cancelled"
	case isS3Error(err):
		// The proxy's precondition re-check answers with an S3 error (412, 404).
		return "precondition"
	}
	return "error"
}

func isS3Error(err error) bool {
	var e *s3err.Error
	return errors.As(err, &e)
}

// TookOver implements dynamolease.Observer.
func (m *Metrics) TookOver(released bool) {
	kind := "stale"
	if released {
		kind = "released"
	}
	m.leaseTakeovers.WithLabelValues(kind).Inc()
}

// Renewed implements dynamolease.Observer.
func (m *Metrics) Renewed() { m.leaseRenewals.Inc() }

// Lost implements dynamolease.Observer.
func (m *Metrics) Lost() { m.leasesLost.Inc() }

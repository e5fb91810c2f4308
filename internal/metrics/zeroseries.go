package metrics

// The label values that alerts and dashboards name, created at zero when
// the process starts. A series that appears only with its first event hides
// that event from increase() and rate() (they need two samples), so the
// first lease-store error or backend failure would never fire an alert, and
// a panel would show "no data" instead of 0.
var (
	leaseStoreOps         = []string{"create", "replace", "get", "create_batch", "replace_batch"}
	backendMethods        = []string{"GET", "HEAD", "PUT", "POST", "DELETE"}
	backendErrorKinds     = []string{"transport", "status_5xx"}
	conditionalOperations = []string{"PutObject", "CopyObject", "CompleteMultipartUpload", "DeleteObject"}
	conditionalOutcomes   = []string{"committed", "precondition_failed", "no_such_key", "conflict",
		"not_implemented", "unavailable", "client_closed", "error"}
	// leasedOperations are the writes that take leases (DeleteObjects one
	// per key).
	leasedOperations = []string{"PutObject", "CopyObject", "CompleteMultipartUpload", "DeleteObject", "DeleteObjects"}
	acquireResults   = []string{"acquired", "wait_budget_exceeded", "store_error", "precondition", "cancelled", "error"}
	takeoverKinds    = []string{"released", "stale"}
	signatureReasons = []string{"SignatureDoesNotMatch", "InvalidAccessKeyId", "RequestTimeTooSkewed", "AccessDenied"}
	detachedOutcomes = []string{"completed", "aborted", "unknown"}
)

// createZeroSeries creates the series alerts and panels name, at zero.
func (m *Metrics) createZeroSeries() {
	for _, op := range leaseStoreOps {
		m.leaseStoreErrors.WithLabelValues(op)
	}
	for _, method := range backendMethods {
		for _, kind := range backendErrorKinds {
			m.backendErrors.WithLabelValues(method, kind)
		}
	}
	for _, op := range conditionalOperations {
		for _, outcome := range conditionalOutcomes {
			m.conditional.WithLabelValues(op, outcome)
		}
	}
	for _, op := range leasedOperations {
		for _, outcome := range detachedOutcomes {
			m.leasedWrites.detached.WithLabelValues(op, outcome)
		}
		m.leasedWrites.leftToExpire.WithLabelValues(op)
	}
	for _, result := range acquireResults {
		m.leaseAcquires.WithLabelValues(result)
	}
	for _, kind := range takeoverKinds {
		m.leaseTakeovers.WithLabelValues(kind)
	}
	for _, reason := range signatureReasons {
		m.signatureFailures.WithLabelValues(reason)
	}
}

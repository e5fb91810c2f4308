package metrics

import (
	"net/http"
	"time"
)

// instrumentedTransport times backend requests up to their response
// headers; body streaming is the client's pace, not the backend's.
type instrumentedTransport struct {
	next http.RoundTripper
	m    *Metrics
}

// InstrumentTransport wraps next so that backend requests feed the backend
// metrics. Wrap the transport under the re-signer, so that what is timed is
// the backend alone.
func (m *Metrics) InstrumentTransport(next http.RoundTripper) http.RoundTripper {
	return &instrumentedTransport{next: next, m: m}
}

func (t *instrumentedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.next.RoundTrip(r)
	method := methodLabel(r.Method)
	t.m.backendDurations.get(method).Observe(time.Since(start).Seconds())
	switch {
	case err != nil:
		// A request the client cancelled did not fail at the backend.
		if r.Context().Err() == nil {
			t.m.backendErrors.WithLabelValues(method, "transport").Inc()
		}
	case resp.StatusCode >= 500:
		t.m.backendErrors.WithLabelValues(method, "status_5xx").Inc()
	}
	return resp, err
}

// methodLabel bounds the label's values: a method is whatever a client sent.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodPost, http.MethodDelete:
		return method
	}
	return "other"
}

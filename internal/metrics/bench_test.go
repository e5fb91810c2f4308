package metrics

import (
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/s3cond/s3cond/proxy"
)

// BenchmarkObserveRequest is the metrics cost of one finished request, as
// the proxy reports it after every response.
func BenchmarkObserveRequest(b *testing.B) {
	m := New(prometheus.NewRegistry())
	rec := proxy.RequestRecord{Operation: "GetObject", Status: http.StatusOK, Duration: time.Millisecond, BytesOut: 4096}
	b.ReportAllocs()
	for b.Loop() {
		m.ObserveRequest(rec)
	}
}

// BenchmarkBackendTransport is the metrics cost of one backend request.
func BenchmarkBackendTransport(b *testing.B) {
	m := New(prometheus.NewRegistry())
	rt := m.InstrumentTransport(okTransport{})
	req, _ := http.NewRequest(http.MethodGet, "http://backend/b/k", nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rt.RoundTrip(req); err != nil {
			b.Fatal(err)
		}
	}
}

// okTransport stands for the backend transport: it answers 200 at once.
type okTransport struct{}

var okResponse = &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}

func (okTransport) RoundTrip(*http.Request) (*http.Response, error) { return okResponse, nil }

// Package admin is s3cond's operators' listener: Prometheus metrics at
// /metrics, liveness at /healthz, readiness at /readyz, the lease rows at
// /leases and, behind a token, their release at /leases/release. It is
// served on its own address, apart from the S3 API, so it needs no S3
// signature and can be kept off the client network.
package admin

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves /metrics from gatherer, /healthz, and /readyz from ready.
func Handler(gatherer prometheus.Gatherer, ready *Readiness) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{}))
	// The process answering is all /healthz claims: a dependency being down
	// must not get a healthy process restarted.
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		report := ready.Check(r.Context())
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if !report.Ready() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_, _ = w.Write([]byte(report.String()))
	})
	return mux
}

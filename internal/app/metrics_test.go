package app

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestRequestsThroughTheProxyMoveTheirMetrics(t *testing.T) {
	a := build(t, devConfig(t))
	s3 := httptest.NewServer(a.Handler)
	defer s3.Close()
	reg := a.Registry
	put := func(key, body string, header http.Header) int {
		status, _ := do(t, signed(t, http.MethodPut, s3.URL+"/metrics-bucket/"+key, strings.NewReader(body), header))
		return status
	}
	create := http.Header{"If-None-Match": {"*"}}

	if status := put("k", "hello", create); status != http.StatusOK {
		t.Fatalf("conditional create: %d", status)
	}
	if status := put("k", "again", create); status != http.StatusPreconditionFailed {
		t.Fatalf("second conditional create: %d, want 412", status)
	}
	if status := put("plain", "unconditional", nil); status != http.StatusOK {
		t.Fatalf("unconditional put: %d", status)
	}
	if status, body := do(t, signed(t, http.MethodGet, s3.URL+"/metrics-bucket/k", nil, nil)); status != http.StatusOK || body != "hello" {
		t.Fatalf("get: %d %q", status, body)
	}
	if status, _ := do(t, signedAs(t, "NOSUCHKEY", "x", http.MethodGet, s3.URL+"/metrics-bucket/k", nil, nil)); status != http.StatusForbidden {
		t.Fatalf("unknown key: %d", status)
	}
	if status, _ := do(t, signedAs(t, "S3CONDDEVKEY", "wrong-secret", http.MethodGet, s3.URL+"/metrics-bucket/k", nil, nil)); status != http.StatusForbidden {
		t.Fatalf("wrong secret: %d", status)
	}

	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"s3cond_requests_total", map[string]string{"operation": "PutObject", "status": "200"}, 2},
		{"s3cond_requests_total", map[string]string{"operation": "PutObject", "status": "412"}, 1},
		{"s3cond_requests_total", map[string]string{"operation": "GetObject", "status": "200"}, 1},
		{"s3cond_requests_total", map[string]string{"operation": "GetObject", "status": "403"}, 2},
		{"s3cond_request_duration_seconds", map[string]string{"operation": "PutObject"}, 3},
		{"s3cond_request_body_bytes_total", map[string]string{"operation": "PutObject"}, float64(len("hello") + len("unconditional"))},
		{"s3cond_response_body_bytes_total", map[string]string{"operation": "GetObject"}, -1}, // > len("hello"): error documents count too
		{"s3cond_conditional_writes_total", map[string]string{"operation": "PutObject", "outcome": "committed"}, 1},
		{"s3cond_conditional_writes_total", map[string]string{"operation": "PutObject", "outcome": "precondition_failed"}, 1},
		{"s3cond_signature_failures_total", map[string]string{"reason": "InvalidAccessKeyId"}, 1},
		{"s3cond_signature_failures_total", map[string]string{"reason": "SignatureDoesNotMatch"}, 1},
		{"s3cond_lease_acquisitions_total", map[string]string{"result": "acquired"}, 1},
		{"s3cond_lease_wait_seconds", map[string]string{"result": "acquired"}, 1},
	} {
		got := metricValue(t, reg, c.name, c.labels)
		if c.want < 0 {
			if got <= float64(len("hello")) {
				t.Errorf("%s%v = %v, want more than %d", c.name, c.labels, got, len("hello"))
			}
			continue
		}
		if got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// The lease and backend calls happened, and none failed.
	if n := metricValue(t, reg, "s3cond_lease_store_call_duration_seconds", map[string]string{"op": "create"}); n < 1 {
		t.Errorf("no lease store create was timed")
	}
	if n := metricValue(t, reg, "s3cond_backend_request_duration_seconds", map[string]string{"method": "HEAD"}); n < 2 {
		t.Errorf("backend HEADs timed: %v, want the conditional writes' checks", n)
	}
	if n := metricValue(t, reg, "s3cond_backend_errors_total", nil); n != 0 {
		t.Errorf("backend errors: %v", n)
	}
}

func TestAdminListenerServesMetricsHealthAndReadiness(t *testing.T) {
	a := build(t, devConfig(t))
	adminSrv := httptest.NewServer(a.AdminHandler)
	defer adminSrv.Close()
	s3 := httptest.NewServer(a.Handler)
	defer s3.Close()
	do(t, signed(t, http.MethodGet, s3.URL+"/", nil, nil))

	get := func(path string) (int, string) {
		resp, err := http.Get(adminSrv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if status, body := get("/healthz"); status != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz: %d %q", status, body)
	}
	if status, body := get("/readyz"); status != http.StatusOK || !contains(body, "lease_store: ok") || !contains(body, "backend: ok") {
		t.Errorf("/readyz: %d %q", status, body)
	}
	status, body := get("/metrics")
	if status != http.StatusOK || !contains(body, `s3cond_requests_total{operation="ListBuckets",status="200"} 1`) || !contains(body, "go_goroutines") {
		t.Errorf("/metrics: %d\n%s", status, body)
	}
	a.Readiness.Drain()
	if status, body := get("/readyz"); status != http.StatusServiceUnavailable || !contains(body, "shutting down") {
		t.Errorf("/readyz while draining: %d %q", status, body)
	}
}

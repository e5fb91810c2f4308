package app

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/internal/config"
	"github.com/s3cond/s3cond/internal/testkit"
)

// devConfig is the development setup (embedded S3 store) in a temporary
// directory, with leases in memory.
func devConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Lease.Store = config.LeaseStoreMemory
	cfg.Lease.WaitBudget = 2 * time.Second
	return cfg
}

func build(t *testing.T, cfg *config.Config) *App {
	t.Helper()
	a, err := Build(context.Background(), cfg, zerolog.Nop())
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	t.Cleanup(func() {
		if err := a.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return a
}

// signed builds a request signed with the development key, its payload
// declared UNSIGNED-PAYLOAD so that the body can be any stream.
func signed(t *testing.T, method, url string, body io.Reader, header http.Header) *http.Request {
	t.Helper()
	return signedAs(t, config.DevAccessKeyID, config.DevSecret, method, url, body, header)
}

func signedAs(t *testing.T, keyID, secret, method, url string, body io.Reader, header http.Header) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	creds := aws.Credentials{AccessKeyID: keyID, SecretAccessKey: secret}
	testkit.Sign(t, req, creds, "UNSIGNED-PAYLOAD")
	return req
}

func do(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// metricValue reads one series from reg: a counter's value or a
// histogram's sample count. A series that does not exist reads 0.
func metricValue(t testing.TB, reg prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if !hasLabels(m, labels) {
				continue
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount())
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			}
		}
	}
	return 0
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	matched := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok {
			if v != l.GetValue() {
				return false
			}
			matched++
		}
	}
	return matched == len(want)
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

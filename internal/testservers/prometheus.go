package testservers

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Prometheus is a running Prometheus server (Debian's `prometheus`
// package) scraping one target every second and evaluating rule files as
// often.
type Prometheus struct {
	Endpoint string // http://127.0.0.1:PORT, its HTTP API
	Process  *Process
}

// StartPrometheus starts Prometheus on a free port with a fresh storage
// directory, scraping target (host:port, path /metrics) as job, with the
// given rule files loaded. Prometheus has no "port 0": the port is picked
// free just before the start.
func StartPrometheus(t testing.TB, job, target string, ruleFiles ...string) *Prometheus {
	t.Helper()
	bin := Require(t, "prometheus")
	dir := t.TempDir()
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 900ms
  evaluation_interval: 1s
rule_files: %s
scrape_configs:
  - job_name: %q
    static_configs:
      - targets: [%q]
`, quotedList(ruleFiles), job, target)
	configPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(configPath, []byte(config), 0o600); err != nil {
		t.Fatalf("write prometheus config: %v", err)
	}
	addr := FreeAddr(t)
	p := Start(t, Spec{Name: "prometheus", Path: bin, Dir: dir, Addr: addr, Wait: 30 * time.Second, Args: []string{
		"--config.file=" + configPath,
		"--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + addr,
	}})
	return &Prometheus{Endpoint: "http://" + addr, Process: p}
}

func quotedList(items []string) string {
	out := "["
	for i, s := range items {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%q", s)
	}
	return out + "]"
}

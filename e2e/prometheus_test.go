package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"go.yaml.in/yaml/v3"

	"github.com/s3cond/s3cond/internal/testservers"
)

// TestPrometheusRulesAndDashboardOnRealSeries runs Debian's Prometheus
// against a running s3cond with the shipped rules (deploy/prometheus) and
// checks, after a small workload, that every rule expression and every
// panel query of deploy/grafana/s3cond.json evaluates without error and
// reads only series that exist; then it loses a lease (the lease store stops
// answering while a conditional write holds one) and waits for
// S3condLeaseLost to fire.
func TestPrometheusRulesAndDashboardOnRealSeries(t *testing.T) {
	root := testservers.RepoRoot(t)
	rulesPath := filepath.Join(root, "deploy", "prometheus", "s3cond-rules.yml")
	admin := testservers.FreeAddr(t)
	leaseStore := testservers.StartDelayProxy(t, strings.TrimPrefix(testservers.StartMoto(t), "http://"))
	var backend *testservers.DelayProxy
	env := NewEnv(t, WithDynamoDBLeases(leaseStore.Endpoint()), WithProcessEnv("S3COND_ADMIN_LISTEN="+admin),
		WithConfig(func(c *Config) {
			backend = testservers.StartDelayProxy(t, strings.TrimPrefix(c.Backend.Endpoint, "http://"))
			c.Backend.Endpoint = backend.Endpoint()
			// Short leases, so that one is lost within seconds.
			c.Lease.Timeout, c.Lease.WaitBudget, c.Lease.PollInterval, c.Lease.MaxClockSkewRate = "2s", "1s", "50ms", 1.5
		}))
	env.RequireProxy(t)
	prom := promAPI{testservers.StartPrometheus(t, "s3cond", admin, rulesPath).Endpoint}
	waitUntil(t, "Prometheus to scrape s3cond", 30*time.Second, func() bool {
		n, err := prom.query(`s3cond_leases_lost_total{job="s3cond"} == 0`)
		return err == nil && n == 1
	})

	runMetricsWorkload(t, env)
	rules := readRules(t, rulesPath)
	var recorded []string
	for _, r := range rules {
		if r.record != "" {
			recorded = append(recorded, r.record)
		}
	}
	waitUntil(t, "the workload's series and the recording rules", 30*time.Second, func() bool {
		names := prom.metricNames(t)
		return slices.Contains(names, "s3cond_lease_wait_seconds_bucket") && containsAll(names, recorded)
	})
	names := prom.metricNames(t)
	for _, r := range rules {
		checkQuery(t, prom, names, "rule "+r.name, r.expr, false)
	}
	vars := map[string]string{"$__rate_interval": "1m", "$__range": "10m", "$job": "s3cond", "$instance": admin}
	for title, queries := range dashboardQueries(t, filepath.Join(root, "deploy", "grafana", "s3cond.json"), vars) {
		for _, q := range queries {
			checkQuery(t, prom, names, "panel "+title, q, true)
		}
	}

	if prom.firing(t, "S3condLeaseLost") {
		t.Fatal("S3condLeaseLost fires before any lease was lost")
	}
	loseALease(t, env, backend, leaseStore, func() {
		waitUntil(t, "S3condLeaseLost to fire", 30*time.Second, func() bool { return prom.firing(t, "S3condLeaseLost") })
	})
}

// checkQuery fails the test if expr errors, reads a series name Prometheus
// has never seen, or (for a panel, after the workload) shows nothing.
func checkQuery(t *testing.T, prom promAPI, known []string, what, expr string, wantData bool) {
	t.Helper()
	for _, name := range namesIn(expr) {
		if !slices.Contains(known, name) {
			t.Errorf("%s reads %s, which has no series: %s", what, name, expr)
		}
	}
	n, err := prom.query(expr)
	switch {
	case err != nil:
		t.Errorf("%s: %v", what, err)
	case wantData && n == 0:
		t.Errorf("%s shows no data after the workload: %s", what, expr)
	}
}

type namedRule struct{ name, record, expr string }

func readRules(t *testing.T, path string) []namedRule {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f ruleFile
	if err := yaml.Unmarshal(raw, &f); err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	var out []namedRule
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			out = append(out, namedRule{name: r.Record + r.Alert, record: r.Record, expr: r.Expr})
		}
	}
	if len(out) == 0 {
		t.Fatalf("no rules in %s", path)
	}
	return out
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// runMetricsWorkload makes the requests whose series the panels show:
// plain and conditional writes (committed and 412), reads (one 404, one the
// client hangs up on), a listing.
func runMetricsWorkload(t *testing.T, env *Env) {
	t.Helper()
	ctx := context.Background()
	client := env.Client(t, env.RW)
	CreateBucket(t, client, "metrics")
	body := bytes.Repeat([]byte("m"), 4<<20)
	put := func(key string, ifNoneMatch bool) error {
		in := &s3.PutObjectInput{Bucket: aws.String("metrics"), Key: aws.String(key), Body: bytes.NewReader(body)}
		if ifNoneMatch {
			in.IfNoneMatch = aws.String("*")
		}
		_, err := client.PutObject(ctx, in)
		return err
	}
	if err := put("plain", false); err != nil {
		t.Fatal(err)
	}
	if err := put("created", true); err != nil {
		t.Fatal(err)
	}
	if err := put("created", true); err == nil {
		t.Fatal("a second If-None-Match: * create succeeded")
	}
	if _, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("metrics"), Key: aws.String("missing")}); err == nil {
		t.Fatal("GET of a missing key succeeded")
	}
	if _, err := client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("metrics")}); err != nil {
		t.Fatal(err)
	}
	readCtx, cancel := context.WithCancel(ctx)
	out, err := client.GetObject(readCtx, &s3.GetObjectInput{Bucket: aws.String("metrics"), Key: aws.String("plain")})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadFull(out.Body, make([]byte, 4096))
	cancel()
	out.Body.Close()
}

// loseALease makes a conditional write lose its lease, and runs whileLost
// before letting it end: the backend and the lease store stop answering as
// the write's PUT reaches the backend (its third request head, after the
// HEAD before the lease and the re-check under it; the latency keeps the
// PUT in the proxy until both are paused), so the renewal due at half the
// 2 s timeout fails until the lease's deadline passes.
func loseALease(t *testing.T, env *Env, backend, leaseStore *testservers.DelayProxy, whileLost func()) {
	t.Helper()
	backend.SetLatency(time.Second)
	before := requestHeads(backend)
	done := make(chan int, 1)
	go func() { done <- conditionalPutStatus(env, "/metrics/lost") }()
	// Its HEAD, then its PUT: a create that made its lease row re-checks
	// nothing under it (docs/spec.md §3 step 4).
	waitUntil(t, "the write's PUT to reach the backend", 30*time.Second, func() bool {
		return requestHeads(backend) >= before+2
	})
	backend.Pause()
	leaseStore.Pause()
	whileLost()
	leaseStore.Resume()
	backend.Resume()
	backend.SetLatency(0)
	if status := <-done; status == http.StatusOK {
		t.Fatalf("the write whose lease was lost answered %d", status)
	}
}

// conditionalPutStatus sends an If-None-Match: * PUT and returns its
// status (0 if it got none).
func conditionalPutStatus(env *Env, path string) int {
	req, err := http.NewRequest(http.MethodPut, env.Endpoint+path, strings.NewReader("lost"))
	if err != nil {
		return 0
	}
	req.Header.Set("If-None-Match", "*")
	if _, err := SignRequest(req, env.RW, UnsignedPayload, time.Now()); err != nil {
		return 0
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// requestHeads counts the request heads a DelayProxy's clients sent.
func requestHeads(p *testservers.DelayProxy) int {
	n := 0
	for _, c := range p.Conns() {
		for offset := int64(0); ; n++ {
			end, ok := c.HeadEndAfter(offset)
			if !ok {
				break
			}
			offset = end
		}
	}
	return n
}

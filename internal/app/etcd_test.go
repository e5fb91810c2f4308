package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/s3cond/s3cond/internal/config"
	"github.com/s3cond/s3cond/internal/testservers"
)

// An s3cond on a three-member etcd cluster: conditional writes go through
// it; frozen (every member SIGSTOPped, no quorum), conditional writes answer
// 503 within a few seconds while unconditional ones go on, /readyz blames
// the lease store; thawed, everything works again.
func TestEtcdStoreWithoutQuorum(t *testing.T) {
	cluster := testservers.StartEtcdCluster(t)
	cfg := devConfig(t)
	cfg.Lease.Store = config.LeaseStoreEtcd
	cfg.Lease.Etcd.Endpoints = cluster.Endpoints()
	cfg.Lease.Etcd.RequestTimeout = time.Second
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	a := build(t, cfg)
	s3 := httptest.NewServer(a.Handler)
	defer s3.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	put := func(key, body string, header http.Header) (int, string) {
		return do(t, signed(t, http.MethodPut, s3.URL+"/etcd-bucket/"+key, strings.NewReader(body), header))
	}
	create := http.Header{"If-None-Match": {"*"}}

	waitReadiness(ctx, t, a, true, "with quorum")
	if status, body := put("k", "v1", create); status != http.StatusOK {
		t.Fatalf("conditional create: %d %s", status, body)
	}
	if status, _ := put("k", "v2", create); status != http.StatusPreconditionFailed {
		t.Fatalf("second conditional create: %d, want 412", status)
	}

	cluster.Freeze()
	defer cluster.Thaw()
	start := time.Now()
	status, body := put("fresh", "never", create)
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "ServiceUnavailable") {
		t.Fatalf("conditional create without quorum: %d %s; want 503 ServiceUnavailable", status, body)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the 503 took %s; want a few seconds at most", took)
	}
	if status, body := put("plain", "p1", nil); status != http.StatusOK {
		t.Fatalf("unconditional PUT without quorum: %d %s", status, body)
	}
	waitReadiness(ctx, t, a, false, "without quorum")
	if report := a.Readiness.Check(ctx).String(); !contains(report, "lease_store: ") || !contains(report, "backend: ok") {
		t.Errorf("the report should blame the lease store alone:\n%s", report)
	}

	cluster.Thaw()
	if err := cluster.WaitLeader(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	waitReadiness(ctx, t, a, true, "with quorum back")
	if status, body := put("fresh", "after", create); status != http.StatusOK {
		t.Fatalf("conditional create after the thaw: %d %s", status, body)
	}
	if status, body := do(t, signed(t, http.MethodGet, s3.URL+"/etcd-bucket/fresh", nil, nil)); status != http.StatusOK || body != "after" {
		t.Fatalf("GET fresh: %d %q", status, body)
	}
}

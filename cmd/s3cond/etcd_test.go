package main

import (
	"strings"
	"testing"
	"time"

	"github.com/s3cond/s3cond/internal/testservers"
)

// etcdEnv points the example config's lease store at endpoints.
func etcdEnv(endpoints ...string) []string {
	return []string{
		"S3COND_LEASE_STORE=etcd",
		"S3COND_LEASE_ETCD_ENDPOINTS=" + strings.Join(endpoints, ","),
		"S3COND_LEASE_ETCD_REQUEST_TIMEOUT=1s",
	}
}

func TestTableCreateOnEtcdChecksTheCluster(t *testing.T) {
	cluster := testservers.StartEtcdCluster(t)
	out, err := runCmd(t, etcdEnv(cluster.Endpoints()...), "table", "create", "--config", "../../config.yaml")
	if err != nil {
		t.Fatalf("table create on etcd: %v", err)
	}
	if !strings.Contains(out, "answers; nothing to create") || !strings.Contains(out, `"s3cond/leases/"`) {
		t.Fatalf("table create on etcd printed %q", out)
	}
}

func TestTableCreateOnUnreachableEtcdFails(t *testing.T) {
	start := time.Now()
	_, err := runCmd(t, etcdEnv("http://"+testservers.FreeAddr(t)), "table", "create", "--config", "../../config.yaml")
	if err == nil || !strings.Contains(err.Error(), "does not answer") {
		t.Fatalf("table create on an unreachable etcd: %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("failing took %s", took)
	}
}

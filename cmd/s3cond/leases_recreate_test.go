package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/s3cond/s3cond/internal/config"
	"github.com/s3cond/s3cond/internal/leasestore"
	"github.com/s3cond/s3cond/internal/testservers"
)

// motoEnv points the example config's lease store at a DynamoDB table on
// moto, with the lease settings given.
func motoEnv(endpoint, table string, settings ...string) []string {
	return append([]string{
		"S3COND_LEASE_STORE=dynamodb",
		"S3COND_LEASE_DYNAMODB_ENDPOINT=" + endpoint,
		"S3COND_LEASE_DYNAMODB_TABLE=" + table,
		"S3COND_LEASE_DYNAMODB_CREDENTIALS_SOURCE=static",
		"S3COND_LEASE_DYNAMODB_CREDENTIALS_ACCESS_KEY_ID=testing",
		"S3COND_LEASE_DYNAMODB_CREDENTIALS_SECRET_ACCESS_KEY=testing",
	}, settings...)
}

// The lost-table procedure keeps the table absent (writers get 503) for
// the longest lease the fleet may have granted, a sized one included, and
// only then creates it. The old advice (timeout × skew, 200 ms here) would
// have let writers back while a lost 500 ms sized lease was live: the
// command must still be waiting, the table absent, at 2 × that.
func TestLeasesRecreateTableWaitsOutTheLongestSizedLease(t *testing.T) {
	endpoint := testservers.StartMoto(t)
	env := motoEnv(endpoint, "recreated", "S3COND_LEASE_TIMEOUT=100ms", "S3COND_LEASE_MAX_SIZED_TIMEOUT=500ms",
		"S3COND_LEASE_MAX_CLOCK_SKEW_RATE=2", "S3COND_LEASE_POLL_INTERVAL=10ms", "S3COND_LEASE_TTL=1h")
	cfg, err := config.Load("../../config.yaml", env)
	if err != nil {
		t.Fatal(err)
	}
	oldWait := cfg.Lease.TakeoverAfter()
	sizedLeaseLiveUntil := time.Duration(float64(cfg.Lease.MaxSizedTimeout) * cfg.Lease.MaxClockSkewRate)
	start := time.Now()
	done := make(chan error, 1)
	var out string
	go func() {
		var err error
		out, err = runCmd(t, env, "leases", "recreate-table", "--config", "../../config.yaml", "--yes")
		done <- err
	}()
	// Past the old wait and into the sized lease's: writers must still be
	// refused, so the table must still be absent.
	time.Sleep(oldWait * 2)
	if exists, err := leaseTableExists(t, cfg); err != nil || exists {
		t.Fatalf("%s after the command started (the old wait was %s): table exists=%v, %v; want absent while a sized lease may live",
			time.Since(start).Round(time.Millisecond), oldWait, exists, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("leases recreate-table: %v (%s)", err, out)
	}
	if took := time.Since(start); took < sizedLeaseLiveUntil {
		t.Fatalf("the table was recreated %s after the command started, before the lost sized lease (%s × skew) could have ended", took, cfg.Lease.MaxSizedTimeout)
	}
	if exists, err := leaseTableExists(t, cfg); err != nil || !exists {
		t.Fatalf("after the command: table exists=%v, %v", exists, err)
	}
	if !strings.Contains(out, "is ready") {
		t.Fatalf("output %q", out)
	}
	// It refuses a table that exists: only a wait from the loss covers the
	// lost table's leases.
	if _, err := runCmd(t, env, "leases", "recreate-table", "--config", "../../config.yaml", "--yes"); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("recreate-table over an existing table: %v", err)
	}
}

// leaseTableExists asks the store of cfg whether its table exists.
func leaseTableExists(t *testing.T, cfg *config.Config) (bool, error) {
	t.Helper()
	store, err := leasestore.Open(context.Background(), cfg)
	if err != nil {
		return false, err
	}
	defer store.Close()
	return store.TableExists(context.Background())
}

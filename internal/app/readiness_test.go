package app

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/internal/config"
	"github.com/s3cond/s3cond/internal/leasestore"
	"github.com/s3cond/s3cond/internal/testservers"
)

// startMoto runs moto (standing in for DynamoDB) on port, so the test can
// stop it and start a fresh one where the first one was.
func startMoto(t *testing.T, port int) *testservers.Process {
	t.Helper()
	return testservers.Start(t, testservers.Spec{
		Name: "moto",
		Path: "moto_server",
		Args: []string{"-H", "127.0.0.1", "-p", strconv.Itoa(port)},
		Addr: "127.0.0.1:" + strconv.Itoa(port),
		Wait: 60 * time.Second,
	})
}

func TestReadinessFollowsTheLeaseStore(t *testing.T) {
	port := testservers.FreePort(t)
	moto := startMoto(t, port)
	cfg := devConfig(t)
	cfg.Lease.Store = config.LeaseStoreDynamoDB
	cfg.Lease.DynamoDB.Endpoint = "http://127.0.0.1:" + strconv.Itoa(port)
	cfg.Lease.DynamoDB.Table = "readiness-leases"
	cfg.Lease.DynamoDB.Credentials = config.Credentials{Source: config.CredentialsStatic, AccessKeyID: "moto", SecretAccessKey: "moto"}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := createLeaseTable(ctx, cfg); err != nil {
		t.Fatalf("create the lease table: %v", err)
	}
	a := build(t, cfg)

	waitReadiness(ctx, t, a, true, "with the lease store up")

	moto.Kill()
	waitReadiness(ctx, t, a, false, "with the lease store stopped")
	if report := a.Readiness.Check(ctx); !contains(report.String(), "lease_store: ") || !contains(report.String(), "backend: ok") {
		t.Errorf("the report should blame the lease store alone:\n%s", report)
	}

	startMoto(t, port)
	if err := createLeaseTable(ctx, cfg); err != nil { // a fresh moto starts empty
		t.Fatalf("re-create the lease table: %v", err)
	}
	waitReadiness(ctx, t, a, true, "with the lease store back")
}

// createLeaseTable is `s3cond table create` for cfg's DynamoDB table.
func createLeaseTable(ctx context.Context, cfg *config.Config) error {
	store, err := leasestore.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	_, err = store.Create(ctx, zerolog.Nop())
	return err
}

package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
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
// table, watched while the command runs, must stay absent for 500 ms × skew.
func TestLeasesRecreateTableWaitsOutTheLongestSizedLease(t *testing.T) {
	endpoint := testservers.StartMoto(t)
	env := motoEnv(endpoint, "recreated", "S3COND_LEASE_TIMEOUT=100ms", "S3COND_LEASE_MAX_SIZED_TIMEOUT=500ms",
		"S3COND_LEASE_MAX_CLOCK_SKEW_RATE=2", "S3COND_LEASE_POLL_INTERVAL=10ms", "S3COND_LEASE_TTL=1h")
	cfg, err := config.Load("../../config.yaml", env)
	if err != nil {
		t.Fatal(err)
	}
	sizedLeaseLiveUntil := time.Duration(float64(cfg.Lease.MaxSizedTimeout) * cfg.Lease.MaxClockSkewRate)
	done := make(chan error, 1)
	out := &announcingWriter{announced: make(chan time.Time, 1)}
	go func() {
		done <- run(context.Background(), []string{"leases", "recreate-table", "--config", "../../config.yaml", "--yes"}, env, out, io.Discard)
	}()
	// The wait starts when the command says so, after its first call to
	// moto (which may take seconds on a loaded machine).
	var start time.Time
	select {
	case start = <-out.announced:
	case err := <-done:
		t.Fatalf("leases recreate-table ended before it waited: %v (%s)", err, out)
	}
	// Watch the table while the command waits: it must stay absent
	// (writers refused) past the old wait and for the whole sized lease.
	if err := watchTableUntilDone(t, cfg, done, start, sizedLeaseLiveUntil); err != nil {
		t.Fatalf("leases recreate-table: %v (%s)", err, out)
	}
	if took := time.Since(start); took < sizedLeaseLiveUntil {
		t.Fatalf("the table was recreated %s after the command started, before the lost sized lease (%s × skew) could have ended", took, cfg.Lease.MaxSizedTimeout)
	}
	if exists, err := leaseTableExists(t, cfg); err != nil || !exists {
		t.Fatalf("after the command: table exists=%v, %v", exists, err)
	}
	if !strings.Contains(out.String(), "is ready") {
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

// watchTableUntilDone asks whether the table exists every 20 ms until the
// command ends (its error on done), and fails the test if the table
// appeared before absentFor had passed since start.
func watchTableUntilDone(t *testing.T, cfg *config.Config, done <-chan error, start time.Time, absentFor time.Duration) error {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-tick.C:
		}
		exists, err := leaseTableExists(t, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if seen := time.Since(start); exists && seen < absentFor {
			t.Fatalf("the table exists %s after the command started, before the lost sized lease could have ended (%s)", seen.Round(time.Millisecond), absentFor)
		}
	}
}

// announcingWriter keeps what the command prints and says when it first
// printed (recreate-table prints its wait as it starts it).
type announcingWriter struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	announced chan time.Time
}

func (w *announcingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buf.Len() == 0 {
		w.announced <- time.Now()
	}
	return w.buf.Write(p)
}

func (w *announcingWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

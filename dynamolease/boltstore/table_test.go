package boltstore_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/boltstore"
	"github.com/s3cond/s3cond/dynamolease/tabletest"
)

func testContext(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func openBolt(t testing.TB, path string) *boltstore.Table {
	t.Helper()
	tbl, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tbl.Close() })
	return tbl
}

func TestBoltTableConformance(t *testing.T) {
	tabletest.Run(t, func(t *testing.T) dynamolease.Table {
		return openBolt(t, filepath.Join(t.TempDir(), "leases.db"))
	})
}

func TestBoltSecondOpenFailsClearly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	openBolt(t, path)
	start := time.Now()
	second, err := boltstore.Open(path, boltstore.Options{})
	if err == nil {
		_ = second.Close()
		t.Fatal("second OpenBolt on a file in use succeeded")
	}
	if !strings.Contains(err.Error(), "another process holds it") {
		t.Fatalf("error does not say the file is in use: %v", err)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Fatalf("second OpenBolt took %s to fail", waited)
	}
}

// A restarted process must honour the leases its predecessor held.
func TestBoltLeaseSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	opts := dynamolease.Options{Timeout: 10 * time.Second, PollInterval: 10 * time.Millisecond, WaitBudget: 150 * time.Millisecond}
	first, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dynamolease.NewCommitter(first, opts, zerolog.Nop()).Acquire(testContext(t, 5*time.Second), "b/k", "*", nil); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil { // the process stops without releasing
		t.Fatal(err)
	}
	again := openBolt(t, path)
	_, err = dynamolease.NewCommitter(again, opts, zerolog.Nop()).Acquire(testContext(t, 5*time.Second), "b/k", "*", nil)
	if !errors.Is(err, dynamolease.ErrWaitBudgetExceeded) {
		t.Fatalf("Acquire after restart = %v, want ErrWaitBudgetExceeded (the old lease is live)", err)
	}
}

func TestBoltExpiredRowsAreSweptAndRecreatable(t *testing.T) {
	tbl := openBolt(t, filepath.Join(t.TempDir(), "leases.db"))
	ctx := testContext(t, 5*time.Second)
	old := dynamolease.Record{Path: "b/old", ETag: "*", Timeout: time.Second, TTL: time.Now().Add(-time.Hour)}
	live := dynamolease.Record{Path: "b/live", ETag: "*", Timeout: time.Second, TTL: time.Now().Add(time.Hour)}
	for _, r := range []dynamolease.Record{old, live} {
		if _, err := tbl.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	// As after DynamoDB's TTL removed it: a Create succeeds.
	if _, err := tbl.Create(ctx, dynamolease.Record{Path: "b/old", ETag: "*", Generation: 0, Owner: "new",
		Timeout: time.Second, TTL: time.Now().Add(-time.Minute)}); err != nil {
		t.Fatalf("Create over an expired row: %v", err)
	}
	n, err := tbl.Sweep(ctx, time.Now())
	if err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v; want 1 row deleted", n, err)
	}
	if r, _ := tbl.Get(ctx, "b/old", "*"); r != nil {
		t.Fatalf("expired row still there: %+v", *r)
	}
	if r, _ := tbl.Get(ctx, "b/live", "*"); r == nil {
		t.Fatal("live row was swept")
	}
}

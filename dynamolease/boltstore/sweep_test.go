package boltstore_test

import (
	"context"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
)

// SweepPeriodically removes a row once its TTL has passed, at the next
// sweep (every minute for this TTL), and stop ends the sweeper.
func TestSweepPeriodicallyRemovesExpiredRows(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		tbl := openBolt(t, filepath.Join(dir, "leases.db"))
		ctx := context.Background()
		if _, err := tbl.Create(ctx, dynamolease.Record{Path: "b/k", ETag: "*", Timeout: time.Second, TTL: time.Now().Add(30 * time.Second)}); err != nil {
			t.Fatal(err)
		}
		stop := tbl.SweepPeriodically(time.Minute, zerolog.Nop())
		defer stop()
		time.Sleep(time.Minute + time.Second)
		synctest.Wait()
		if r, err := tbl.Get(ctx, "b/k", "*"); err != nil || r != nil {
			t.Fatalf("row a sweep after its TTL: %+v, %v; want it gone", r, err)
		}
	})
}

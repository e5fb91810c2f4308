package admin

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func TestReadinessCachesAndTimesOutProbes(t *testing.T) {
	var calls atomic.Int64
	var down atomic.Bool
	store := Probe{Name: "lease_store", Check: func(ctx context.Context) error {
		calls.Add(1)
		if down.Load() {
			return errors.New("connection refused")
		}
		return nil
	}}
	// A dependency that hangs must not hang /readyz: its probe times out.
	hanging := Probe{Name: "backend", Check: func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	}}
	now := time.Unix(1000, 0)
	r := NewReadiness(50*time.Millisecond, 3*time.Second, store)
	r.now = func() time.Time { return now }

	if report := r.Check(context.Background()); !report.Ready() {
		t.Fatalf("not ready with a healthy store:\n%s", report)
	}
	down.Store(true)
	if report := r.Check(context.Background()); !report.Ready() || calls.Load() != 1 {
		t.Fatalf("within the cache period the probe ran again (%d calls):\n%s", calls.Load(), report)
	}
	now = now.Add(3 * time.Second)
	if report := r.Check(context.Background()); report.Ready() || report.String() != "not ready\nlease_store: connection refused\n" {
		t.Fatalf("after the cache period, with the store down:\n%s", report)
	}

	withHang := NewReadiness(50*time.Millisecond, time.Second, store, hanging)
	start := time.Now()
	report := withHang.Check(context.Background())
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("a hanging probe held /readyz for %s", took)
	}
	if report.Ready() || !errors.Is(report.Results[1].Err, context.DeadlineExceeded) {
		t.Errorf("a hanging backend should time out:\n%s", report)
	}
}

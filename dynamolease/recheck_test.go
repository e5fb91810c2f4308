package dynamolease_test

import (
	"context"
	"testing"
	"time"
)

// TestCreatedRowSkipsTheRecheck: a lease whose row this Acquire created
// soon after the caller's state read needs no re-check (SPEC §3 step 4);
// a takeover of a released row checks, and so does a create that came
// more than a lease timeout after the read.
func TestCreatedRowSkipsTheRecheck(t *testing.T) {
	opts := fastOptions()
	_, p1, _ := twoProcesses(opts)
	checks := 0
	check := func(context.Context) error { checks++; return nil }

	lease, err := p1.AcquireAfterRead(testContext(t, time.Second), "b/k", "*", time.Now(), check)
	if err != nil {
		t.Fatal(err)
	}
	if checks != 0 {
		t.Fatalf("a freshly created row was re-checked %d times, want none", checks)
	}
	if err := lease.Release(testContext(t, time.Second)); err != nil {
		t.Fatal(err)
	}

	// The row exists, released: taking it over checks before and after.
	if _, err := p1.AcquireAfterRead(testContext(t, time.Second), "b/k", "*", time.Now(), check); err != nil {
		t.Fatal(err)
	}
	if checks != 2 {
		t.Fatalf("a takeover of a released row checked %d times, want 2 (before the takeover and holding it)", checks)
	}

	// A state read older than a lease timeout is re-checked even on a
	// fresh row (a long upload between the HEAD and the lease).
	checks = 0
	old := time.Now().Add(-opts.Timeout - time.Millisecond)
	if _, err := p1.AcquireAfterRead(testContext(t, time.Second), "b/k2", "*", old, check); err != nil {
		t.Fatal(err)
	}
	if checks != 1 {
		t.Fatalf("a fresh row created %s after the state read checked %d times, want 1", opts.Timeout, checks)
	}

	// Without a state read (plain Acquire) the re-check always runs.
	checks = 0
	if _, err := p1.Acquire(testContext(t, time.Second), "b/k3", "*", check); err != nil {
		t.Fatal(err)
	}
	if checks != 1 {
		t.Fatalf("Acquire on a fresh row checked %d times, want 1", checks)
	}
}

// TestShortTTLKeepsTheRecheck: the skip relies on rows outliving the
// writes they guard by more than the window; a TTL too short for that
// re-checks every created row.
func TestShortTTLKeepsTheRecheck(t *testing.T) {
	opts := fastOptions()
	opts.TTL = opts.Timeout * 3 // > timeout × skew, as configuration demands, < 3 × timeout × skew + rounding
	_, p1, _ := twoProcesses(opts)
	checks := 0
	if _, err := p1.AcquireAfterRead(testContext(t, time.Second), "b/k", "*", time.Now(), func(context.Context) error { checks++; return nil }); err != nil {
		t.Fatal(err)
	}
	if checks != 1 {
		t.Fatalf("with TTL %s a created row checked %d times, want 1", opts.TTL, checks)
	}
}

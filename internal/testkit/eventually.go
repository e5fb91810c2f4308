package testkit

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// pollInterval is how often Eventually asks again: often enough that a
// test waits little past the moment the condition holds, seldom enough not
// to load the process it asks.
const pollInterval = 50 * time.Millisecond

// Eventually asks check until it returns nil, for the waits where nothing
// reports an event: another process (a server starting, Prometheus
// scraping on its own schedule, a store committing late) or the kernel.
// Anything a test's own code does should report itself instead (Events, a
// channel, a hook). It gives up when ctx ends, or after the fail-safe bound
// if ctx has no deadline, failing the test with what and check's last
// error. check may call t.Fatal to stop at once (a process that exited).
func Eventually(ctx context.Context, t testing.TB, what string, check func(context.Context) error) {
	t.Helper()
	if err := Poll(ctx, check); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// Poll is Eventually for harness code that returns errors instead of
// failing a test: nil once check returned nil, else ctx's end (or the
// fail-safe bound's) with check's last error.
func Poll(ctx context.Context, check func(context.Context) error) error {
	if _, bounded := ctx.Deadline(); !bounded {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, failSafe)
		defer cancel()
	}
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	for {
		err := check(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w; last: %w", context.Cause(ctx), err)
		case <-ticker.C:
		}
	}
}

// Within is Eventually bounded by d from now, for waits whose bound is part
// of what is tested (a readiness cache, a takeover time).
func Within(t testing.TB, d time.Duration, what string, check func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	Eventually(ctx, t, what, check)
}

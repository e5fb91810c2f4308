package testkit

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func TestEventuallyReturnsOnceTheCheckHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		asked := 0
		start := time.Now()
		Eventually(t.Context(), t, "the third answer", func(context.Context) error {
			if asked++; asked < 3 {
				return errors.New("not yet")
			}
			return nil
		})
		if asked != 3 || time.Since(start) != 2*pollInterval {
			t.Fatalf("asked %d times over %s, want 3 over %s", asked, time.Since(start), 2*pollInterval)
		}
	})
}

func TestEventuallyGivesUpWithTheLastError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		err := Poll(context.Background(), func(context.Context) error { return errors.New("port closed") })
		if err == nil || !strings.Contains(err.Error(), "port closed") || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want the deadline and the last error", err)
		}
		if waited := time.Since(start); waited < failSafe {
			t.Fatalf("gave up after %s, before the fail-safe bound %s", waited, failSafe)
		}
	})
}

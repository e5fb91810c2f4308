package app

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/s3cond/s3cond/internal/testkit"
)

// waitReadiness asks a's readiness until its verdict is want. The lease
// store and the backend are other processes (moto, etcd) that report
// nothing, and a verdict is cached for readinessCacheFor, so the check is
// asked again until then plus the time a changed process takes to tell
// (etcd electing a leader, moto answering again).
func waitReadiness(ctx context.Context, t *testing.T, a *App, want bool, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, readinessCacheFor+2*probeTimeout+10*time.Second)
	defer cancel()
	testkit.Eventually(ctx, t, fmt.Sprintf("readiness %v %s", want, what), func(ctx context.Context) error {
		if report := a.Readiness.Check(ctx); report.Ready() != want {
			return fmt.Errorf("readiness still %v:\n%s", report.Ready(), report)
		}
		return nil
	})
}

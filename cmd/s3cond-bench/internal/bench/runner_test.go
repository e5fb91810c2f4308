package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// scriptedWorkload stands in for an S3 workload when the test is about the
// runner itself: it sleeps instead of calling an endpoint and fails every
// failEvery-th operation.
type scriptedWorkload struct {
	sleep     time.Duration
	failEvery int64
	calls     *atomic.Int64
}

func (scriptedWorkload) Name() string                                { return "scripted" }
func (scriptedWorkload) Prepare(context.Context, *Target, int) error { return nil }

func (w scriptedWorkload) Do(ctx context.Context, _ *Target, _ Op) (Outcome, error) {
	n := w.calls.Add(1)
	select {
	case <-time.After(w.sleep):
	case <-ctx.Done():
		return Outcome{}, ctx.Err()
	}
	if w.failEvery > 0 && n%w.failEvery == 0 {
		// Two distinct messages, alternating, whichever worker fails.
		return Outcome{}, fmt.Errorf("scripted failure of kind %d", (n/w.failEvery)%2)
	}
	return Outcome{Bytes: 10}, nil
}

// measureOnly runs the measurement phase without Prepare/cleanup, which need
// a real endpoint.
func measureOnly(w Workload, workers int, opt RunOptions) Result {
	return measure(context.Background(), &Target{Label: "fake"}, w, workers, opt)
}

func TestRunStopsAfterOpsAndCountsFailures(t *testing.T) {
	calls := &atomic.Int64{}
	w := scriptedWorkload{sleep: time.Millisecond, failEvery: 5, calls: calls}
	res := measureOnly(w, 3, RunOptions{Ops: 50, Log: zerolog.Nop()})
	// Every claimed operation ran once: 50 calls, one in five failed.
	if calls.Load() != 50 {
		t.Fatalf("%d calls, want 50", calls.Load())
	}
	if res.Ops != 40 || res.Errors != 10 {
		t.Errorf("ops %d errors %d, want 40 and 10", res.Ops, res.Errors)
	}
	if res.Bytes != 400 || res.Latency.Count != 40 {
		t.Errorf("bytes %d, latency samples %d; want 400 and 40 (failures add neither)", res.Bytes, res.Latency.Count)
	}
	if res.Latency.P50 < time.Millisecond {
		t.Errorf("p50 %v is below the 1 ms each operation sleeps", res.Latency.P50)
	}
	if len(res.ErrorSamples) != 2 {
		t.Errorf("error samples %q, want the 2 distinct messages", res.ErrorSamples)
	}
}

func TestRunStopsAtTheDeadline(t *testing.T) {
	w := scriptedWorkload{sleep: 10 * time.Millisecond, calls: &atomic.Int64{}}
	res := measureOnly(w, 2, RunOptions{Duration: 300 * time.Millisecond, Log: zerolog.Nop()})
	if res.Elapsed < 300*time.Millisecond || res.Elapsed > 2*time.Second {
		t.Errorf("elapsed %v, want about 300 ms", res.Elapsed)
	}
	// 2 workers × 300 ms / 10 ms = 60 at best; scheduling on a busy
	// machine can halve that, but not make it zero or exceed it.
	if res.Ops < 10 || res.Ops > 62 {
		t.Errorf("%d ops in 300 ms with 2 workers of 10 ms each", res.Ops)
	}
	if res.Errors != 0 {
		t.Errorf("%d errors: operations finished after the deadline must count, not fail", res.Errors)
	}
}

// stoppingWorkload loops until the deadline like hot-cas does, then reports
// errStopped; such an operation is neither an op nor an error.
type stoppingWorkload struct{}

func (stoppingWorkload) Name() string                                { return "stopping" }
func (stoppingWorkload) Prepare(context.Context, *Target, int) error { return nil }
func (stoppingWorkload) Do(_ context.Context, _ *Target, op Op) (Outcome, error) {
	<-op.Stop
	return Outcome{PreconditionFailed: 3}, errStopped
}

func TestOperationCutShortByTheDeadlineIsNotAFailure(t *testing.T) {
	res := measureOnly(stoppingWorkload{}, 2, RunOptions{Duration: 50 * time.Millisecond, Log: zerolog.Nop()})
	if res.Ops != 0 || res.Errors != 0 {
		t.Errorf("ops %d errors %d, want 0 and 0", res.Ops, res.Errors)
	}
	if res.PreconditionFailed != 6 {
		t.Errorf("412 count %d, want the 6 seen before stopping", res.PreconditionFailed)
	}
}

func TestRunNeedsABound(t *testing.T) {
	_, err := RunWorkload(context.Background(), &Target{}, stoppingWorkload{}, 1, RunOptions{})
	if err == nil {
		t.Fatal("no duration and no op count: want an error")
	}
}

func TestInterruptEndsTheRunWithoutCountingFailures(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	w := scriptedWorkload{sleep: time.Hour, calls: &atomic.Int64{}}
	done := make(chan Result)
	go func() { done <- measure(ctx, &Target{Label: "fake"}, w, 2, RunOptions{Ops: 10, Log: zerolog.Nop()}) }()
	select {
	case res := <-done:
		if res.Errors != 0 || res.Ops != 0 {
			t.Errorf("ops %d errors %d after an interrupt, want 0 and 0", res.Ops, res.Errors)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the run did not stop after its context was cancelled")
	}
}

func TestTargetOrderAlternates(t *testing.T) {
	if got := targetOrder(2, 0); got[0] != 0 || got[1] != 1 {
		t.Errorf("turn 0: %v", got)
	}
	if got := targetOrder(2, 1); got[0] != 1 || got[1] != 0 {
		t.Errorf("turn 1: %v", got)
	}
	if got := targetOrder(1, 1); len(got) != 1 || got[0] != 0 {
		t.Errorf("one target: %v", got)
	}
}

package testkit

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// failSafe bounds a wait for an event that never comes, so a broken
// component fails its test instead of hanging it. It orders nothing: a
// wait ends the moment the event is reported.
const failSafe = 10 * time.Second

// Events keeps what a component reports (request records, write ends, …)
// and wakes the tests that wait for one. The zero value is ready to use
// and safe for concurrent use.
type Events[T any] struct {
	mu      sync.Mutex
	items   []T
	changed chan struct{} // closed and replaced on each Add
}

// Add records v and wakes every waiter.
func (e *Events[T]) Add(v T) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.items = append(e.items, v)
	if e.changed != nil {
		close(e.changed)
		e.changed = nil
	}
}

// All returns a copy of what was reported so far.
func (e *Events[T]) All() []T {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]T(nil), e.items...)
}

// WaitFor returns the first reported item that satisfies match, waiting
// for it to be reported if need be; the test fails if none is within the
// fail-safe bound.
func (e *Events[T]) WaitFor(t testing.TB, what string, match func(T) bool) T {
	t.Helper()
	return e.WaitForContext(context.Background(), t, what, match)
}

// WaitForContext is WaitFor bounded by ctx instead, for events that come
// after a slow stretch of a real workload; without a deadline on ctx the
// fail-safe bound still holds.
func (e *Events[T]) WaitForContext(ctx context.Context, t testing.TB, what string, match func(T) bool) T {
	t.Helper()
	if _, bounded := ctx.Deadline(); !bounded {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, failSafe)
		defer cancel()
	}
	v, err := e.waitFor(ctx, match)
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
	return v
}

// WaitForCount waits until at least n items have been reported in all;
// the test fails if they are not within the fail-safe bound.
func (e *Events[T]) WaitForCount(t testing.TB, what string, n int) {
	t.Helper()
	if n <= 0 {
		return
	}
	seen := 0
	e.WaitFor(t, what, func(T) bool { seen++; return seen >= n })
}

func (e *Events[T]) waitFor(ctx context.Context, match func(T) bool) (T, error) {
	seen := 0
	for {
		e.mu.Lock()
		for ; seen < len(e.items); seen++ {
			if match(e.items[seen]) {
				v := e.items[seen]
				e.mu.Unlock()
				return v, nil
			}
		}
		if e.changed == nil {
			e.changed = make(chan struct{})
		}
		changed := e.changed
		e.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			var zero T
			return zero, fmt.Errorf("not reported (%w); reported: %+v", context.Cause(ctx), e.All())
		}
	}
}

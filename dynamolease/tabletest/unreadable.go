package tabletest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
)

// HeldThenTakenOver checks the protocol on a row of tbl that its writer
// left unreadable (a hand-written "b/k" "*" row whose numbers s3cond cannot
// use): it is held for the reader's own timeout × skew, then taken over and
// rewritten readable, never "lease store unavailable" for good, never
// taken over at once. Each store's test writes such rows its own way.
func HeldThenTakenOver(t *testing.T, tbl dynamolease.Table) {
	t.Helper()
	opts := dynamolease.Options{
		Timeout:          200 * time.Millisecond,
		MaxClockSkewRate: 2,
		PollInterval:     20 * time.Millisecond,
		TTL:              time.Hour,
		WaitBudget:       5 * time.Second,
	}
	held := time.Duration(float64(opts.Timeout) * opts.MaxClockSkewRate)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	log := &syncWriter{w: &strings.Builder{}}
	c := dynamolease.NewCommitter(tbl, opts, zerolog.New(log))
	begun := time.Now()
	lease, err := c.Acquire(ctx, "b/k", "*", nil)
	if err != nil {
		t.Fatalf("Acquire on the unreadable row: %v", err)
	}
	if waited := time.Since(begun); waited < held {
		t.Errorf("took the unreadable row over after %v, before the %v it counts as held", waited, held)
	}
	row, err := tbl.Get(ctx, "b/k", "*")
	if err != nil || row == nil || row.Unreadable != "" || row.Generation != lease.Generation() {
		t.Fatalf("row after the takeover: %+v, %v; want it readable at generation %d", row, err, lease.Generation())
	}
	if err := lease.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(log.String(), "lease row is unreadable"); n != 1 {
		t.Errorf("logged the unreadable row %d times, want once:\n%s", n, log.String())
	}
}

// syncWriter lets the Committer's goroutines log into one builder.
type syncWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}

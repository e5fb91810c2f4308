package dynamolease_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
)

// observed counts what a recordingObserver heard.
type observed struct {
	acquired, failed  int
	lastErr           error
	releasedTakeovers int
	staleTakeovers    int
	renewals, lost    int
}

// recordingObserver stands for a metrics exporter: it keeps what it was told.
type recordingObserver struct {
	mu sync.Mutex
	n  observed
}

func (o *recordingObserver) AcquireDone(_ time.Duration, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err == nil {
		o.n.acquired++
	} else {
		o.n.failed++
		o.n.lastErr = err
	}
}

func (o *recordingObserver) TookOver(released bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if released {
		o.n.releasedTakeovers++
	} else {
		o.n.staleTakeovers++
	}
}

func (o *recordingObserver) Renewed() { o.mu.Lock(); o.n.renewals++; o.mu.Unlock() }
func (o *recordingObserver) Lost()    { o.mu.Lock(); o.n.lost++; o.mu.Unlock() }

func (o *recordingObserver) snapshot() observed {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n
}

func TestObserverHearsAcquisitionsTakeoversRenewalsAndLosses(t *testing.T) {
	ctx := testContext(t, 10*time.Second)
	tbl := dynamolease.NewMemTable()
	opts := fastOptions()
	opts.WaitBudget = 100 * time.Millisecond
	obs1, obs2 := &recordingObserver{}, &recordingObserver{}
	opts.Observer = obs1
	p1 := dynamolease.NewCommitter(tbl, opts, zerolog.Nop())
	opts.Observer = obs2
	p2 := dynamolease.NewCommitter(tbl, opts, zerolog.Nop())

	first := mustAcquire(t, p1, "b/k", "*")
	if err := first.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// Taking the released row over is a takeover of the released kind.
	second := mustAcquire(t, p1, "b/k", "*")

	// Another process waits past its budget while the lease is held...
	if _, err := p2.Acquire(ctx, "b/k", "*", nil); !errors.Is(err, dynamolease.ErrWaitBudgetExceeded) {
		t.Fatalf("want the wait budget exceeded, got %v", err)
	}
	// ...and, with a longer budget, takes the lease over once it goes stale.
	opts.WaitBudget = 5 * time.Second
	obs3 := &recordingObserver{}
	opts.Observer = obs3
	p3 := dynamolease.NewCommitter(tbl, opts, zerolog.Nop())
	third := mustAcquire(t, p3, "b/k", "*")
	defer third.Release(ctx)
	// The first holder learns it lost the lease when it next renews.
	if err := second.Renew(ctx); !errors.Is(err, dynamolease.ErrLeaseLost) {
		t.Fatalf("renewing a lease taken over: %v", err)
	}

	got1, got2 := obs1.snapshot(), obs2.snapshot()
	if got1.acquired != 2 || got1.failed != 0 || got1.releasedTakeovers != 1 || got1.renewals != 1 || got1.lost != 1 {
		t.Errorf("holder's observer: %+v", got1)
	}
	if got2.failed != 1 || !errors.Is(got2.lastErr, dynamolease.ErrWaitBudgetExceeded) || got2.acquired != 0 {
		t.Errorf("waiter's observer: %+v", got2)
	}
	if got3 := obs3.snapshot(); got3.acquired != 1 || got3.staleTakeovers != 1 || got3.releasedTakeovers != 0 {
		t.Errorf("stale taker's observer: %+v", got3)
	}
}

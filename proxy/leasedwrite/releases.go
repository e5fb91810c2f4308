package leasedwrite

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
)

// releaseTimeout bounds marking a lease released once the client is gone.
const releaseTimeout = 5 * time.Second

// releaseLease marks l released within releaseTimeout; a failure is logged,
// and the row then expires on its own.
func (w *Writer) releaseLease(parent context.Context, l *dynamolease.Lease) {
	w.endLease(parent, l, l.Release)
}

// releaseNotAwaited is releaseLease for a release nobody waits for, run on
// a goroutine of its own (Lease.ReleaseNotAwaited).
func (w *Writer) releaseNotAwaited(l *dynamolease.Lease) {
	w.endLease(context.Background(), l, l.ReleaseNotAwaited)
}

func (w *Writer) endLease(parent context.Context, l *dynamolease.Lease, release func(context.Context) error) {
	ctx, cancel := context.WithTimeout(parent, releaseTimeout)
	defer cancel()
	if err := release(ctx); err != nil {
		w.log.Warn().Err(err).Str("path", l.Path()).Uint64("generation", l.Generation()).
			Msg("could not mark lease released; it expires after its timeout")
	}
}

// releaseInBackground marks l released without holding up the handler, whose
// write has ended and whose answer is written: net/http reads the client's
// next request on the connection only once the handler returns, and with
// the embedded store a release nobody waits for may wait for company to
// share its commit (Lease.ReleaseNotAwaited). WaitForReleases waits for these.
func (w *Writer) releaseInBackground(l *dynamolease.Lease) {
	w.releases.start()
	go func() {
		defer w.releases.done()
		w.releaseNotAwaited(l)
	}()
}

// releaseAllInBackground is releaseInBackground for the leases of one
// write, released together: a DeleteObjects' hundreds of leases in a few
// lease store calls (dynamolease.Committer.ReleaseAllNotAwaited), not one
// each.
func (w *Writer) releaseAllInBackground(leases []*dynamolease.Lease) {
	switch len(leases) {
	case 0:
		return
	case 1:
		w.releaseInBackground(leases[0])
		return
	}
	w.releases.start()
	go func() {
		defer w.releases.done()
		ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
		defer cancel()
		for i, err := range w.leases.ReleaseAllNotAwaited(ctx, leases) {
			if err != nil {
				w.log.Warn().Err(err).Str("path", leases[i].Path()).Uint64("generation", leases[i].Generation()).
					Msg("could not mark lease released; it expires after its timeout")
			}
		}
	}()
}

// WaitForReleases waits until every lease release started in the background
// has finished, or ctx ends. Call it after the server has stopped and before
// the lease store closes, so that no lease is left held until it expires.
func (w *Writer) WaitForReleases(ctx context.Context) error {
	for {
		idle := w.releases.idleChan()
		if idle == nil {
			return nil
		}
		select {
		case <-idle:
		case <-ctx.Done():
			return fmt.Errorf("lease releases still running: %w", ctx.Err())
		}
	}
}

// releaseTracker counts background releases. Unlike a sync.WaitGroup it
// may be waited on while releases still start: a handler cancelled at
// shutdown can finish after the wait began.
type releaseTracker struct {
	mu      sync.Mutex
	running int
	idle    chan struct{} // closed when running drops to zero
}

func (t *releaseTracker) start() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.running == 0 {
		t.idle = make(chan struct{})
	}
	t.running++
}

func (t *releaseTracker) done() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.running--
	if t.running == 0 {
		close(t.idle)
	}
}

// idleChan is closed once no release runs; nil if none runs now.
func (t *releaseTracker) idleChan() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.running == 0 {
		return nil
	}
	return t.idle
}

package proxy

import (
	"context"
	"fmt"
	"sync"

	"github.com/s3cond/s3cond/dynamolease"
)

// releaseInBackground marks l released without holding up the handler, whose
// write has ended and whose answer is written: net/http reads the client's
// next request on the connection only once the handler returns, and with
// the embedded store a release nobody waits for may wait for company to
// share its commit (Lease.ReleaseNotAwaited). WaitForReleases waits for these.
func (p *Proxy) releaseInBackground(l *dynamolease.Lease) {
	p.releases.start()
	go func() {
		defer p.releases.done()
		p.releaseNotAwaited(l)
	}()
}

// WaitForReleases waits until every lease release started in the background
// has finished, or ctx ends. Call it after the server has stopped and before
// the lease store closes, so that no lease is left held until it expires.
func (p *Proxy) WaitForReleases(ctx context.Context) error {
	for {
		idle := p.releases.idleChan()
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

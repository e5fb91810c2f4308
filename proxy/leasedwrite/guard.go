package leasedwrite

import (
	"context"
	"sync"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/s3err"
)

// guard ties one store write (a conditional or strict-mode write, or a
// leased DeleteObjects) to the leases that guard it (SPEC §3: a lease
// outlives the write it guards).
//
// Until the write reaches the store it belongs to its client: a hang-up
// aborts it, and since nothing was committed its leases are released. Once
// it has reached the store (its final byte released, or a bodiless
// request sent) it no longer depends on the client: it runs to its end
// under its leases, which are kept renewed, and they are released only once
// the store's answer has been read in full. When that answer cannot be
// known (the store connection broke, a lease was lost, the write
// outlasted the detached write limit) the leases are never released early:
// they are left to expire on their own.
type guard struct {
	w    *Writer
	req  Request
	ctx  context.Context // the store request's context
	stop context.CancelFunc
	done chan struct{} // closed by end

	mu         sync.Mutex
	leases     []*dynamolease.Lease
	keepAlives []func()
	reached    bool // the write may have reached the store
	answered   bool // the store's answer was read in full
	clientLeft bool // the client hung up before the write ended
	aborted    bool // ... and before the write reached the store
	ended      bool
}

// WriteEnd describes a leased write that did not simply end with its client
// listening: reported to a LeasedWriteObserver.
type WriteEnd struct {
	Operation string
	// ClientLeft: the client hung up before the write ended.
	ClientLeft bool
	// Outcome: "completed" (the store answered in full; leases released),
	// "aborted" (the write never reached the store; leases released) or
	// "unknown" (it reached the store but no full answer came back; its
	// leases are left to expire).
	Outcome string
	// Leases is how many leases guarded the write.
	Leases int
}

// LeasedWriteObserver is told about leased writes whose client hung up
// and about those whose outcome is unknown. *metrics.Metrics implements it.
type LeasedWriteObserver interface {
	ObserveLeasedWriteEnd(WriteEnd)
}

// guardWrite starts guarding req's store write. Call end when the write is over.
func (w *Writer) guardWrite(req Request) *guard {
	g := &guard{w: w, req: req, done: make(chan struct{})}
	g.ctx, g.stop = context.WithCancel(context.WithoutCancel(req.Ctx))
	go g.watchClient()
	return g
}

// watchClient aborts the write if the client hangs up before it reached the
// store; after that, it gives the write the detached limit to end.
func (g *guard) watchClient() {
	select {
	case <-g.done:
		return
	case <-g.req.Ctx.Done():
	}
	g.mu.Lock()
	g.clientLeft = true
	reached := g.reached
	if !reached {
		g.aborted = true
		g.stop()
	}
	g.mu.Unlock()
	if !reached {
		return
	}
	g.w.log.Info().Str("request_id", g.req.ID).Str("operation", g.req.Op.String()).
		Msg("client hung up while its write was at the backend; the write runs to its end under its lease")
	timer := time.NewTimer(g.w.detachedWriteLimit)
	defer timer.Stop()
	select {
	case <-g.done:
	case <-timer.C:
		g.w.log.Error().Str("request_id", g.req.ID).Dur("limit", g.w.detachedWriteLimit).
			Msg("write whose client left is still running at the backend; cancelling it: its outcome is unknown and its leases are left to expire")
		g.stop()
	}
}

// reach marks the write as (possibly) reaching the store: from now on a
// client hang-up no longer cancels it. It fails if the client already left.
func (g *guard) reach() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.aborted {
		return s3err.Wrap(s3err.InternalError, context.Canceled)
	}
	if err := g.ctx.Err(); err != nil {
		// A lease was lost before anything was sent: send nothing.
		return s3err.Wrap(s3err.ConditionalRequestConflict, err)
	}
	g.reached = true
	return nil
}

// answer records that the store's answer was read in full.
func (g *guard) answer() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.answered = true
}

// hold adds a lease to the write: it is renewed until the write ends, a
// loss cancels the write, and end releases it (or leaves it to expire).
func (g *guard) hold(l *dynamolease.Lease) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ended { // the handler already gave up
		g.w.releaseInBackground(l)
		return s3err.New(s3err.InternalError)
	}
	g.leases = append(g.leases, l)
	g.keepAlives = append(g.keepAlives, l.KeepAlive(context.WithoutCancel(g.ctx)))
	go g.watchLost(l)
	return nil
}

// watchLost cancels the write if a lease is lost: what can still be aborted
// is; what the store already committed may race, and is logged.
func (g *guard) watchLost(l *dynamolease.Lease) {
	select {
	case <-l.Lost():
	case <-g.done:
		return
	}
	g.w.log.Error().Str("request_id", g.req.ID).Str("path", l.Path()).Str("etag", l.ETag()).
		Uint64("generation", l.Generation()).
		Msg("lease lost while the write was in flight; aborting it, but if the backend already committed, this outcome may race")
	g.stop()
}

// end stops the renewals and releases the leases, unless the write reached
// the store and its answer was not read in full: then nobody knows
// whether it committed, and its leases expire on their own.
func (g *guard) end() {
	g.mu.Lock()
	if g.ended {
		g.mu.Unlock()
		return
	}
	g.ended = true
	close(g.done)
	leases, keepAlives := g.leases, g.keepAlives
	// The handler still runs, so a cancelled request context means the
	// client went away (net/http also cancels it when a body read fails).
	clientLeft := g.clientLeft || g.req.Ctx.Err() != nil
	report := WriteEnd{Operation: g.req.Op.String(), ClientLeft: clientLeft, Outcome: "completed", Leases: len(leases)}
	switch {
	case g.reached && !g.answered:
		report.Outcome = "unknown"
	case !g.reached:
		report.Outcome = "aborted"
	}
	g.mu.Unlock()

	for _, stop := range keepAlives {
		stop()
	}
	g.stop()
	if report.Outcome == "unknown" {
		ev := g.w.log.Error().Str("request_id", g.req.ID).Str("operation", report.Operation).Bool("client_left", report.ClientLeft)
		for _, l := range leases {
			ev = ev.Str("path", l.Path())
		}
		ev.Int("leases", len(leases)).Msg("the backend's answer to a leased write never came in full; its outcome is unknown, so its leases are left to expire")
	} else {
		g.w.releaseAllInBackground(leases)
	}
	if (report.ClientLeft || report.Outcome == "unknown") && g.w.observer != nil {
		g.w.observer.ObserveLeasedWriteEnd(report)
	}
}

package proxy

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/s3err"
)

// defaultDetachedWriteLimit bounds how long a leased write may run on at
// the backend after its client hung up (a CopyObject of 5 GiB or a
// CompleteMultipartUpload of many parts can take minutes). A write still
// running then is cancelled, its outcome unknown, its leases left to expire.
const defaultDetachedWriteLimit = 15 * time.Minute

// guardedWrite ties one backend write (a conditional or strict-mode write,
// or a leased DeleteObjects) to the leases that guard it (SPEC §3: a lease
// outlives the write it guards).
//
// Until the write reaches the backend it belongs to its client: a hang-up
// aborts it, and since nothing was committed its leases are released. Once
// it has reached the backend (its final byte released, or a bodiless
// request sent) it no longer depends on the client: it runs to its end
// under its leases, which are kept renewed, and they are released only once
// the backend's answer has been read in full. When that answer cannot be
// known (the backend connection broke, a lease was lost, the write
// outlasted defaultDetachedWriteLimit) the leases are never released early:
// they are left to expire on their own.
type guardedWrite struct {
	p    *Proxy
	c    *call
	ctx  context.Context // the backend request's context
	stop context.CancelFunc
	done chan struct{} // closed by end

	mu         sync.Mutex
	leases     []*dynamolease.Lease
	keepAlives []func()
	reached    bool // the write may have reached the backend
	answered   bool // the backend's answer was read in full
	clientLeft bool // the client hung up before the write ended
	aborted    bool // ... and before the write reached the backend
	ended      bool
}

// WriteEnd describes a leased write that did not simply end with its client
// listening: reported to a RequestObserver that also implements
// LeasedWriteObserver.
type WriteEnd struct {
	Operation string
	// ClientLeft: the client hung up before the write ended.
	ClientLeft bool
	// Outcome: "completed" (the backend answered in full; leases released),
	// "aborted" (the write never reached the backend; leases released) or
	// "unknown" (it reached the backend but no full answer came back; its
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

// guardWrite starts guarding c's backend write. Call end when the write is over.
func (p *Proxy) guardWrite(c *call) *guardedWrite {
	g := &guardedWrite{p: p, c: c, done: make(chan struct{})}
	g.ctx, g.stop = context.WithCancel(context.WithoutCancel(c.r.Context()))
	go g.watchClient()
	return g
}

func (p *Proxy) detachedLimit() time.Duration {
	if p.detachedWriteLimit > 0 {
		return p.detachedWriteLimit
	}
	return defaultDetachedWriteLimit
}

// watchClient aborts the write if the client hangs up before it reached the
// backend; after that, it gives the write the detached limit to end.
func (g *guardedWrite) watchClient() {
	select {
	case <-g.done:
		return
	case <-g.c.r.Context().Done():
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
	g.p.log.Info().Str("request_id", g.c.id).Str("operation", g.c.op.String()).
		Msg("client hung up while its write was at the backend; the write runs to its end under its lease")
	timer := time.NewTimer(g.p.detachedLimit())
	defer timer.Stop()
	select {
	case <-g.done:
	case <-timer.C:
		g.p.log.Error().Str("request_id", g.c.id).Dur("limit", g.p.detachedLimit()).
			Msg("write whose client left is still running at the backend; cancelling it: its outcome is unknown and its leases are left to expire")
		g.stop()
	}
}

// reach marks the write as (possibly) reaching the backend: from now on a
// client hang-up no longer cancels it. It fails if the client already left.
func (g *guardedWrite) reach() error {
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

// answer records that the backend's answer was read in full.
func (g *guardedWrite) answer() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.answered = true
}

// hold adds a lease to the write: it is renewed until the write ends, a
// loss cancels the write, and end releases it (or leaves it to expire).
func (g *guardedWrite) hold(l *dynamolease.Lease) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ended { // the handler already gave up
		g.p.releaseInBackground(l)
		return s3err.New(s3err.InternalError)
	}
	g.leases = append(g.leases, l)
	g.keepAlives = append(g.keepAlives, l.KeepAlive(context.WithoutCancel(g.ctx)))
	go g.watchLost(l)
	return nil
}

// watchLost cancels the write if a lease is lost: what can still be aborted
// is; what the backend already committed may race, and is logged.
func (g *guardedWrite) watchLost(l *dynamolease.Lease) {
	select {
	case <-l.Lost():
	case <-g.done:
		return
	}
	g.p.log.Error().Str("request_id", g.c.id).Str("path", l.Path()).Str("etag", l.ETag()).
		Uint64("generation", l.Generation()).
		Msg("lease lost while the write was in flight; aborting it, but if the backend already committed, this outcome may race")
	g.stop()
}

// end stops the renewals and releases the leases, unless the write reached
// the backend and its answer was not read in full: then nobody knows
// whether it committed, and its leases expire on their own.
func (g *guardedWrite) end() {
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
	clientLeft := g.clientLeft || g.c.r.Context().Err() != nil
	report := WriteEnd{Operation: g.c.op.String(), ClientLeft: clientLeft, Outcome: "completed", Leases: len(leases)}
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
		ev := g.p.log.Error().Str("request_id", g.c.id).Str("operation", report.Operation).Bool("client_left", report.ClientLeft)
		for _, l := range leases {
			ev = ev.Str("path", l.Path())
		}
		ev.Int("leases", len(leases)).Msg("the backend's answer to a leased write never came in full; its outcome is unknown, so its leases are left to expire")
	} else {
		g.p.releaseAllInBackground(leases)
	}
	if report.ClientLeft || report.Outcome == "unknown" {
		if o, ok := g.p.observer.(LeasedWriteObserver); ok {
			o.ObserveLeasedWriteEnd(report)
		}
	}
}

// detachedWriter is the client's response writer for a write that may
// outlive its client: once a write to the client fails it swallows the rest,
// so the backend's answer is still read to its end.
type detachedWriter struct {
	http.ResponseWriter
	failed bool
}

func (w *detachedWriter) Write(b []byte) (int, error) {
	if !w.failed {
		if _, err := w.ResponseWriter.Write(b); err != nil {
			w.failed = true
		}
	}
	return len(b), nil
}

// Unwrap lets http.ResponseController reach the connection.
func (w *detachedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// detached returns a copy of c whose responses are written through a
// detachedWriter.
func (c *call) detached() *call {
	d := *c
	d.w = &detachedWriter{ResponseWriter: c.w}
	return &d
}

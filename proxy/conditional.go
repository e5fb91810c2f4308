package proxy

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/precondition"
	"github.com/s3cond/s3cond/s3err"
)

// errETagMoved means the object changed between choosing a lease and
// holding it, for a condition (If-Match: * or a list) that still holds: the
// write must lease the new ETag instead, or it could interleave with a
// compare-and-swap on that ETag.
var errETagMoved = errors.New("object ETag changed while the lease was sought")

// maxETagMoves bounds how often a write follows a moving ETag before it
// answers 409 like a conflicting write in progress.
const maxETagMoves = 5

// releaseTimeout bounds marking a lease released once the client is gone.
const releaseTimeout = 5 * time.Second

// writeCondition is what a leased write needs from its condition.
// precondition.Conditions is one; precondition.AnyState is strict mode's.
type writeCondition interface {
	Evaluate(precondition.ObjectState) error
	LeaseETag(precondition.ObjectState) string
	Covers(leaseETag string, s precondition.ObjectState) bool
}

var (
	_ writeCondition = precondition.Conditions{}
	_ writeCondition = precondition.AnyState{}
)

// serveConditional handles PutObject, CopyObject, CompleteMultipartUpload
// and DeleteObject carrying If-Match / If-None-Match, and in strict mode
// every such write. It returns false when the call needs no lease and should
// simply be forwarded.
func (p *Proxy) serveConditional(c *call) bool {
	var conds precondition.Conditions
	var err error
	if c.op == operation.DeleteObject {
		conds, err = precondition.ParseDelete(c.r.Header)
	} else {
		conds, err = precondition.ParseWrite(c.r.Header)
	}
	var added bool
	if err == nil {
		conds, added, err = p.policyConditions(c, conds) // writepolicy.go
	}
	if err != nil {
		p.fail(c, err)
		return true
	}
	var cond writeCondition = conds
	switch {
	case !conds.Active() && (c.backend.NativeConditional || p.leases == nil || !p.serializeAllWrites(c.target.Bucket)):
		return false
	case !conds.Active():
		cond = precondition.AnyState{}
	case c.backend.NativeConditional:
		p.forward(c, p.nativeSpec(c, added))
		return true
	case p.leases == nil:
		p.fail(c, s3err.Newf(s3err.NotImplemented, "Conditional writes need a lease store, and none is configured."))
		return true
	}
	markLeased(c)
	p.leasedWrite(c, cond)
	return true
}

// leasedWrite runs one write under its key's lease (SPEC §3). Once the
// write has reached the backend it runs to its end whatever the client does
// (guardedWrite), and the lease is released only after the backend's answer.
func (p *Proxy) leasedWrite(c *call, conds writeCondition) {
	ctx := c.r.Context()
	// A copy's or a completion's work is measured while the rest goes on.
	sizing := p.startSizing(c)
	// The lease is sought while the state is read where its ETag is known
	// without it (earlyLease).
	readAt := time.Now()
	early := p.startEarlyLease(c, conds, readAt)
	// Fail fast (SPEC §3 step 1): no body is read for a write that cannot succeed.
	state, err := c.backend.head(ctx, c.target)
	if err == nil {
		err = conds.Evaluate(state)
	}
	if err != nil {
		p.abandonEarly(early)
		p.fail(c, err)
		return
	}
	if early != nil && early.etag != conds.LeaseETag(state) {
		p.abandonEarly(early) // not the row this state needs; lease afresh
		early = nil
	}
	read := stateRead{state: state, at: readAt, early: early}

	g := p.guardWrite(c)
	defer g.end()
	spec := p.clientBody(c)
	spec.stripConditions = true
	acquire := func() error { return p.acquireGuarded(c, g, conds, &read, sizing) }
	switch {
	case sendsBody(c.op) && bufferedBody(spec.length):
		// A small body is read and verified whole before the lease is
		// used, and sent after: a write that loses the race never opens
		// a backend upload only to abort it (on a hot key, most do).
		body, err := readWhole(spec.body, spec.length)
		if err != nil {
			p.abandonEarly(early)
			p.fail(c, err)
			return
		}
		if err := acquire(); err != nil {
			p.fail(c, err)
			return
		}
		spec.body = bytes.NewReader(body)
		spec.gate = g.reach
	case sendsBody(c.op) && !c.backend.WritesInPlace:
		// The body streams to the backend while the lease is sought; its
		// final byte waits for the lease and the re-check (SPEC §4), so the
		// first write to finish its upload wins, as on S3. A client that
		// hangs up before then leaves the backend a short body, which the
		// aborted request does not store.
		spec.gate = func() error {
			if err := acquire(); err != nil {
				return err
			}
			return g.reach()
		}
	default:
		// No body, or a store that would show the upload as it arrives
		// (WritesInPlace): the lease and the re-check come first, and a
		// body streams under the lease.
		if err := acquire(); err != nil {
			p.fail(c, err)
			return
		}
		spec.gate = g.reach
	}
	spec.storeCondition = storeConditionHeader(c, conds)
	spec.ctx = g.ctx
	spec.heldThroughout = g.heldThroughout
	// forward returns a status only once the backend's answer was read in
	// full (a body that breaks off aborts the handler, and g.end then
	// leaves the lease to expire).
	if res := p.forward(c.detached(), spec); res.status != 0 {
		g.answer()
	}
	// The answer goes to the client now, not after the deferred release:
	// the write is done, and the next write on this key (which expects the
	// new ETag, so takes another lease row) need not wait for the release
	// commit. Writers still waiting on this row expect the old ETag and fail
	// their check either way.
	_ = http.NewResponseController(c.w).Flush()
}

// stateRead is the fail-fast HEAD's state, when it was sent, and the lease
// sought beside it (nil when none was).
type stateRead struct {
	state precondition.ObjectState
	at    time.Time
	early *earlyLease
}

// acquireGuarded takes the write's lease for g, lengthened to the store's
// work (sizing, nil for none; leasesize.go), with the half-lease rule (SPEC
// §3 step 5: final bytes only while at least half the lease remains,
// otherwise renew first); then g keeps it alive until the write ends.
func (p *Proxy) acquireGuarded(c *call, g *guardedWrite, conds writeCondition, known *stateRead, sizing *leaseSizing) error {
	start := time.Now()
	lease, err := p.acquireLease(c.r.Context(), c, c.target, conds, known)
	wait := time.Since(start)
	c.info.set(func(i *requestInfo) { i.leaseWait = wait })
	if err != nil {
		return err
	}
	if err := sizing.extend(c.r.Context(), lease); err != nil {
		p.releaseLease(context.Background(), lease)
		return err
	}
	if err := p.ensureHalfLease(c.r.Context(), lease); err != nil {
		p.releaseLease(context.Background(), lease)
		return err
	}
	return g.hold(lease)
}

// ensureHalfLease renews l unless at least half of its length remains
// (SPEC §3 step 5).
func (p *Proxy) ensureHalfLease(ctx context.Context, l *dynamolease.Lease) error {
	if l.Remaining() >= l.Timeout()/2 {
		return nil
	}
	if err := l.Renew(ctx); err != nil {
		if errors.Is(err, dynamolease.ErrLeaseLost) {
			return s3err.Wrap(s3err.ConditionalRequestConflict, err)
		}
		return s3err.Wrap(s3err.ServiceUnavailable, err)
	}
	if l.Remaining() < l.Timeout()/2 {
		// The renewal itself took more than half the lease: the table is
		// too slow for the final action to be safe.
		return s3err.Newf(s3err.ServiceUnavailable, "The lease store is too slow to keep the lease on this key; retry.")
	}
	return nil
}

// releaseLease marks l released within releaseTimeout; a failure is logged,
// and the row then expires on its own.
func (p *Proxy) releaseLease(parent context.Context, l *dynamolease.Lease) {
	p.endLease(parent, l, l.Release)
}

// releaseNotAwaited is releaseLease for a release nobody waits for, run on
// a goroutine of its own (Lease.ReleaseNotAwaited).
func (p *Proxy) releaseNotAwaited(l *dynamolease.Lease) {
	p.endLease(context.Background(), l, l.ReleaseNotAwaited)
}

func (p *Proxy) endLease(parent context.Context, l *dynamolease.Lease, release func(context.Context) error) {
	ctx, cancel := context.WithTimeout(parent, releaseTimeout)
	defer cancel()
	if err := release(ctx); err != nil {
		p.log.Warn().Err(err).Str("path", l.Path()).Uint64("generation", l.Generation()).
			Msg("could not mark lease released; it expires after its timeout")
	}
}

// leasePath is the lease table's partition key: the backend bucket and the
// object the backend will write (KeyPolicy.LeaseKey), so every s3cond in a
// fleet, whatever its bucket mapping, agrees.
func (b *Backend) leasePath(t operation.Target) string {
	return b.BackendBucket(t.Bucket) + "/" + b.KeyPolicy.LeaseKey(t.Key)
}

// acquireLease takes the lease for a conditional write on t (SPEC §3 steps
// 2–4). known, if set, is a state just read, saving one HEAD, and the lease
// sought beside it.
func (p *Proxy) acquireLease(ctx context.Context, c *call, t operation.Target, conds writeCondition, known *stateRead) (*dynamolease.Lease, error) {
	for moves := 0; ; moves++ {
		var state precondition.ObjectState
		readAt := time.Now()
		if known != nil && moves == 0 {
			if known.early != nil {
				lease, err := known.early.wait()
				if err == nil {
					return lease, nil
				}
				if !errors.Is(err, errETagMoved) {
					return nil, leaseError(err)
				}
				continue
			}
			state, readAt = known.state, known.at
		} else {
			s, err := c.backend.head(ctx, t)
			if err != nil {
				return nil, err
			}
			state = s
		}
		if err := conds.Evaluate(state); err != nil {
			return nil, err
		}
		etag := conds.LeaseETag(state)
		lease, err := p.leases.AcquireAfterRead(ctx, c.backend.leasePath(t), etag, readAt, p.leaseCheck(c, t, conds, etag))
		switch {
		case err == nil:
			return lease, nil
		case errors.Is(err, errETagMoved) && moves < maxETagMoves:
			continue
		}
		return nil, leaseError(err)
	}
}

// leaseCheck is the precondition's re-check against the backend for a
// lease on etag (SPEC §3 steps 3 and 4).
func (p *Proxy) leaseCheck(c *call, t operation.Target, conds writeCondition, etag string) func(context.Context) error {
	return func(ctx context.Context) error {
		s, err := c.backend.head(ctx, t)
		if err != nil {
			return err
		}
		if err := conds.Evaluate(s); err != nil {
			return err
		}
		if !conds.Covers(etag, s) {
			return errETagMoved
		}
		return nil
	}
}

// leaseError maps lease failures to what the client sees: the lease store's
// failures arrive as the protocol's errors (dynamolease/refusal.go), so this
// is the one place that turns them into S3 answers.
func leaseError(err error) error {
	var s3e *s3err.Error
	var refusal *dynamolease.Refusal
	var storeErr *dynamolease.StoreError
	switch {
	case errors.As(err, &s3e):
		return s3e
	case errors.Is(err, errETagMoved), errors.Is(err, dynamolease.ErrWaitBudgetExceeded):
		e := s3err.New(s3err.ConditionalRequestConflict)
		e.Cause = err
		return e
	case errors.As(err, &refusal):
		code := s3err.ServiceUnavailable
		if errors.Is(refusal.Kind, dynamolease.ErrUnsupported) {
			// The request can never succeed: retrying is pointless.
			code = s3err.NotImplemented
		}
		e := s3err.Newf(code, "%s", refusal.Reason)
		e.Cause = err
		return e
	case errors.As(err, &storeErr):
		e := s3err.Newf(s3err.ServiceUnavailable, "The lease store is unavailable; conditional writes are refused until it is back.")
		e.Cause = err
		return e
	}
	return s3err.Wrap(s3err.InternalError, err)
}

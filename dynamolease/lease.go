package dynamolease

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// errReleased is what Renew returns on a lease its holder already released.
var errReleased = errors.New("dynamolease: lease already released")

// Lease is a held lease on one row. Its holder must call Release when done
// (also after losing it), so local waiters go on at once.
type Lease struct {
	c       *Committer
	key     localKey
	owner   string
	timeout time.Duration
	state   *keyState
	turn    *turn // nil when Acquire bypassed a stale local holder

	// opMu serialises Renew and Release, so a background renewal cannot
	// overtake a release (or the other way round) at the table.
	opMu     sync.Mutex
	released bool

	mu         sync.Mutex // guards generation, acquired and timeout (Extend)
	generation uint64
	acquired   time.Time // read before the write that won the row was sent
	// createdBy, set when this lease's Acquire created the row (generation
	// 0, no row before it), is a time read after the table answered.
	createdBy time.Time
	// found is the key state the row this lease took over vouched for
	// (keystate.go); nil when it vouched for none.
	found *KeyState
	// outcome, set by RecordOutcome, is what Release records.
	outcome *KeyState
	// tookOverHeld: this lease took its row over from a holder that had
	// not released it (renametakeover.go).
	tookOverHeld bool
	// receipt, set by RecordReceipt, is what Release records (receipt.go),
	// sealed; carried is the sealed receipt the row bore when this lease
	// took it, which Release writes back when receipt is empty.
	receipt, carried string

	lost      chan struct{}
	lostOnce  sync.Once
	done      chan struct{} // closed by Release, so KeepAlive stops at once
	leaveOnce sync.Once
}

func (c *Committer) newLease(a *attempt, r Record, sentAt time.Time) *Lease {
	return &Lease{
		c:          c,
		key:        a.key,
		owner:      r.Owner,
		timeout:    r.Timeout,
		state:      a.state,
		generation: r.Generation,
		acquired:   sentAt,
		lost:       make(chan struct{}),
		done:       make(chan struct{}),
	}
}

// Path is the row's partition key.
func (l *Lease) Path() string { return l.key.path }

// ETag is the row's sort key: the expected ETag, or "*".
func (l *Lease) ETag() string { return l.key.etag }

// Generation is the row generation this lease holds.
func (l *Lease) Generation() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.generation
}

// Deadline is when the lease ends on this process's monotonic clock: the time
// read just before the winning table write was sent, plus the timeout. A
// write must have ended by then.
func (l *Lease) Deadline() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.acquired.Add(l.timeout)
}

// Timeout is the lease's length, as written on its row: Options.Timeout,
// or the longer length Extend gave it.
func (l *Lease) Timeout() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.timeout
}

// Remaining is the time left until Deadline (negative once past it).
func (l *Lease) Remaining() time.Duration { return time.Until(l.Deadline()) }

// Lost is closed when a renewal or release finds that someone else took the
// lease over, or KeepAlive could not renew it before its deadline.
func (l *Lease) Lost() <-chan struct{} { return l.lost }

// held describes the lease for the local queue.
func (l *Lease) held() heldLease {
	l.mu.Lock()
	defer l.mu.Unlock()
	return heldLease{
		generation: l.generation,
		owner:      l.owner,
		acquired:   l.acquired,
		staleAt:    l.acquired.Add(l.c.opts.staleAfter(l.timeout)),
	}
}

// Renew extends the lease by writing generation+1, conditional on the row
// still having this lease's generation. If someone took it over, it returns
// an error wrapping ErrLeaseLost and closes Lost; a table failure returns a
// *StoreError and leaves the lease valid until its current Deadline.
func (l *Lease) Renew(ctx context.Context) error {
	l.opMu.Lock()
	defer l.opMu.Unlock()
	if l.released {
		return errReleased
	}
	if l.isLost() {
		return l.lostError("renew", nil)
	}
	mine := l.Generation()
	next := l.record(mine+1, false)
	sentAt := time.Now()
	call, done := tableCall(ctx)
	current, err := l.c.table.Replace(call, next, mine)
	done()
	if err == nil || wroteIt(current, next) {
		l.mu.Lock()
		l.generation, l.acquired = next.Generation, sentAt
		l.mu.Unlock()
		l.c.local.holding(l.state, l.turn, l.held())
		l.c.opts.Observer.Renewed()
		return nil
	}
	if errors.Is(err, ErrConditionFailed) {
		l.markLost()
		return l.lostError("renew", current)
	}
	return l.c.storeError(ctx, "renew", err)
}

// Release marks the row released, conditional on it still having this
// lease's generation; it never deletes the row. It lets local waiters go on
// in every case. A lost lease returns an error wrapping ErrLeaseLost; a table
// failure returns a *StoreError, and the row then expires on its own.
// Releasing twice is a no-op.
func (l *Lease) Release(ctx context.Context) error { return l.release(ctx, false) }

// ReleaseNotAwaited is Release for a caller that does not wait on it to go
// on (it runs it on a goroutine of its own, after its write has ended and
// its answer has gone). Unless another goroutine of this process is waiting
// for the row, the release may then wait briefly to share the table's next
// commit (LazyReplacer); tables without that ignore it.
func (l *Lease) ReleaseNotAwaited(ctx context.Context) error { return l.release(ctx, true) }

func (l *Lease) release(ctx context.Context, notAwaited bool) error {
	l.opMu.Lock()
	defer l.opMu.Unlock()
	if l.released {
		return nil
	}
	l.released = true
	close(l.done)
	// Wake local waiters only after the row says released, so the first
	// read they make shows it.
	defer l.leaveLocal()
	if l.isLost() {
		return l.lostError("release", nil)
	}
	mine := l.Generation()
	r := l.record(mine, true)
	r.KeyState = l.recordedOutcome()
	r.Receipt = l.releasedReceipt()
	// The new version's row is independent of this one: write both at
	// once, so the next writer finds the birth as soon as this release.
	birthDone := make(chan struct{})
	go func() {
		defer close(birthDone)
		l.recordBirth(ctx, r.KeyState)
	}()
	defer func() { <-birthDone }()
	replace := l.c.table.Replace
	if notAwaited && !l.c.local.contended(l.state) {
		// Neither the caller nor another goroutine here waits for this
		// write: the table may take its time.
		replace = func(ctx context.Context, r Record, seen uint64) (*Record, error) {
			return ReplaceLazily(ctx, l.c.table, r, seen)
		}
	}
	call, done := tableCall(ctx)
	current, err := replace(call, r, mine)
	done()
	if err == nil || wroteIt(current, r) {
		return nil
	}
	if errors.Is(err, ErrConditionFailed) {
		l.markLost()
		return l.lostError("release", current)
	}
	return l.c.storeError(ctx, "release", err)
}

// KeepAlive renews the lease in the background whenever half of its
// timeout has passed since the last renewal, until stop is called, ctx ends,
// the lease is released, or it is lost. A table failure is retried every
// PollInterval until the deadline; reaching it unrenewed counts as lost.
// stop waits for the background goroutine to end.
func (l *Lease) KeepAlive(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.keepAlive(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

func (l *Lease) keepAlive(ctx context.Context) {
	wake := l.Deadline().Add(-l.Timeout() / 2)
	for {
		timer := time.NewTimer(time.Until(wake))
		select {
		case <-ctx.Done():
		case <-l.lost:
		case <-l.done:
		case <-timer.C:
		}
		timer.Stop()
		if ctx.Err() != nil || l.isLost() || l.isReleased() {
			return
		}
		err := l.renewInBackground(ctx)
		switch {
		case err == nil:
			wake = l.Deadline().Add(-l.Timeout() / 2)
		case ctx.Err() != nil, errors.Is(err, errReleased), errors.Is(err, ErrLeaseLost):
			return
		default:
			if l.Remaining() <= 0 {
				l.c.log.Error().Err(err).Str("path", l.key.path).Str("etag", l.key.etag).
					Uint64("generation", l.Generation()).Msg("lease expired: renewals failed until its deadline")
				l.markLost()
				return
			}
			l.c.log.Warn().Err(err).Str("path", l.key.path).Msg("lease renewal failed; retrying")
			wake = earliest(time.Now().Add(l.c.opts.PollInterval), l.Deadline())
		}
	}
}

func (l *Lease) record(generation uint64, released bool) Record {
	timeout := l.Timeout()
	return Record{
		Path:       l.key.path,
		ETag:       l.key.etag,
		Generation: generation,
		Timeout:    timeout,
		TTL:        time.Now().Add(l.c.opts.rowTTL(timeout)),
		Owner:      l.owner,
		Released:   released,
	}
}

func (l *Lease) isReleased() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

func (l *Lease) isLost() bool {
	select {
	case <-l.lost:
		return true
	default:
		return false
	}
}

// markLost closes Lost and lets local waiters go on: the table decides
// between them and whoever took the lease over.
func (l *Lease) markLost() {
	l.lostOnce.Do(func() {
		close(l.lost)
		l.c.opts.Observer.Lost()
		l.c.log.Warn().Str("path", l.key.path).Str("etag", l.key.etag).Uint64("generation", l.Generation()).
			Msg("lease lost")
	})
	l.leaveLocal()
}

func (l *Lease) leaveLocal() {
	l.leaveOnce.Do(func() {
		l.c.local.endTurn(l.state, l.turn)
		l.c.local.leave(l.key, l.state)
	})
}

func (l *Lease) lostError(op string, current *Record) error {
	desc := "unknown"
	if current != nil {
		desc = fmt.Sprintf("generation %d, owner %q", current.Generation, current.Owner)
	}
	return fmt.Errorf("%s %q (etag %s) at generation %d: row now %s: %w",
		op, l.key.path, l.key.etag, l.Generation(), desc, ErrLeaseLost)
}

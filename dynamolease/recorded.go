package dynamolease

import (
	"context"
	"errors"
	"time"
)

// AcquireRecorded is Acquire for a write of a key every write of which is
// leased (lease.serialize: all-writes), made before any read of the store:
// check is given the key state the row it takes over vouches for
// (keystate.go), and reads the store only when that is nil. A writer that
// takes over a released row recording its own version so costs one lease
// round trip and no HEAD.
func (c *Committer) AcquireRecorded(ctx context.Context, path, etag string, check func(context.Context, *KeyState) error) (*Lease, error) {
	return c.acquireObserved(ctx, path, etag, time.Time{}, check, true)
}

// Found is the key state the row this lease took over vouched for: the
// state of the key now, since every write of it would have had to take
// this row. Nil when the row vouched for none (created, taken over from a
// holder that vanished or left no record, or recording another version).
func (l *Lease) Found() *KeyState {
	if l.found == nil {
		return nil
	}
	s := *l.found
	return &s
}

// RecordOutcome sets the key state Release records: the key's state once
// this lease's write ended with a known outcome (a write's answer read in
// full, or no write sent). Call it only under lease.serialize: all-writes,
// and only for a write of this one key.
func (l *Lease) RecordOutcome(s KeyState) {
	l.opMu.Lock()
	defer l.opMu.Unlock()
	l.outcome = &s
}

// recordedOutcome is the outcome Release writes; called under opMu.
func (l *Lease) recordedOutcome() *KeyState {
	if l.outcome == nil {
		return nil
	}
	s := *l.outcome
	return &s
}

// recordBirth creates the row of the version the key moved to, released
// and vouching for it, when no such row exists: a write from that version
// would have had to create (or take over) that row, so its absence shows
// no write came after ours. The row of such a write lives TTL past its
// last write, which came at most a lease timeout × skew before that
// write ended, after ours landed (after this lease was taken): a create
// answered within TTL − 2 × that of this lease's start cannot have missed
// it. One answered later is cleared again. A failure costs the next writer
// a HEAD, nothing else.
func (l *Lease) recordBirth(ctx context.Context, s *KeyState) {
	if s == nil || s.version() == l.key.etag || l.c.birthsRefused.Load() {
		return
	}
	born := Record{
		Path: l.key.path, ETag: s.version(), Generation: firstGeneration(), Timeout: l.Timeout(),
		TTL: time.Now().Add(l.c.opts.TTL), Owner: l.owner, Released: true, KeyState: s,
	}
	call, done := tableCall(ctx)
	_, err := l.c.table.Create(call, born)
	done()
	switch {
	case errors.Is(err, ErrKeyStatesUnsupported):
		l.c.birthsRefused.Store(true)
		return
	case err != nil:
		return // the row exists, or the table failed: no record
	}
	l.mu.Lock()
	latest := l.acquired.Add(l.c.opts.TTL - 2*l.c.opts.staleAfter(l.timeout) - rowTTLRounding)
	l.mu.Unlock()
	if time.Now().Before(latest) {
		return
	}
	cleared := born
	cleared.KeyState = nil
	call, done = tableCall(ctx)
	_, err = l.c.table.Replace(call, cleared, born.Generation)
	done()
	if err != nil {
		l.c.log.Warn().Err(err).Str("path", born.Path).Str("etag", born.ETag).
			Msg("a late recorded key state could not be cleared; the row vouches for its version until its TTL")
	}
}

package dynamolease

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// Committer takes leases from one Table for one process. It is safe for
// concurrent use; use one per process and table, so that its local queue
// sees every contender of the process.
type Committer struct {
	table Table
	opts  Options
	log   zerolog.Logger
	local *localQueue
	seen  *sightings // when this process first saw each row it waits for
	// ownerPrefix is Options.Owner and this Committer's random token
	// (processToken): the owner of every row it writes starts with it, and
	// no other process's does, even one with the same hostname and PID.
	ownerPrefix string
	attempts    atomic.Uint64 // makes each Acquire's owner attribute unique
	// abandoned settles rows that a failed create or takeover may have left.
	abandoned *abandonedRows
	// birthsRefused: the table carries no key states (births.go), so no
	// birth is tried again.
	birthsRefused atomic.Bool
	// vouchedTakeRefused: the table has no CreateOrTakeVouched (vouched.go).
	vouchedTakeRefused atomic.Bool
}

// NewCommitter returns a Committer on t; zero fields of opts take defaults.
func NewCommitter(t Table, opts Options, log zerolog.Logger) *Committer {
	c := &Committer{table: t, opts: opts.withDefaults(), log: log, local: newLocalQueue(), seen: newSightings(maxSightings)}
	c.ownerPrefix = c.opts.Owner + "#" + processToken()
	c.abandoned = newAbandonedRows(c)
	return c
}

// Options returns the options in force, defaults filled in.
func (c *Committer) Options() Options { return c.opts }

// attempt is one Acquire call.
type attempt struct {
	key       localKey
	owner     string // ownerPrefix plus a per-attempt suffix, so a row we wrote is recognisable
	budgetEnd time.Time
	// check is the caller's precondition, given the key state the row
	// being taken over vouches for (nil: none, read the store).
	check func(context.Context, *KeyState) error
	state *keyState
	// recorded: an AcquireRecorded, which first creates or takes a row
	// vouching for its version in one request (vouched.go).
	recorded bool
	// readAt is when the caller's state read (its HEAD) was sent; zero when
	// it has none this lease can trust, and the re-check always runs.
	readAt time.Time
}

// Acquire takes the lease on (path, etag). etag is the expected ETag as S3
// returns it (quotes included), or "*" for a create.
//
// check re-evaluates the caller's precondition against the backend; nil
// means none. Acquire calls it every PollInterval while another holder's
// lease is live, returning its error unchanged the moment it fails, and
// always once more after the lease is held (SPEC §3 step 4): if that last
// check fails, Acquire releases the lease and returns the check's error
// unchanged.
//
// Other errors: ErrWaitBudgetExceeded (wrapped) when another holder kept the
// lease past Options.WaitBudget; *StoreError when the table failed; the
// context's error when ctx ended.
func (c *Committer) Acquire(ctx context.Context, path, etag string, check func(context.Context) error) (*Lease, error) {
	return c.AcquireAfterRead(ctx, path, etag, time.Time{}, check)
}

// AcquireAfterRead is Acquire for a caller whose precondition held on a
// state read sent at readAt (on the monotonic clock; it may still be in
// flight). The final re-check is skipped when this call created the row
// soon enough after readAt (recheckNeedless, SPEC §3 step 4); a zero readAt
// always re-checks.
func (c *Committer) AcquireAfterRead(ctx context.Context, path, etag string, readAt time.Time, check func(context.Context) error) (*Lease, error) {
	return c.acquireObserved(ctx, path, etag, readAt, ignoringRecords(check), false)
}

// ignoringRecords is a check that reads the store whatever a row records:
// outside strict mode an unleased write may change the key without
// touching its row, and a batch records nothing (keystate.go).
func ignoringRecords(check func(context.Context) error) func(context.Context, *KeyState) error {
	if check == nil {
		return nil
	}
	return func(ctx context.Context, _ *KeyState) error { return check(ctx) }
}

// acquireObserved is an Acquire told to the Observer; recorded says that
// check evaluates the key state a row vouches for (AcquireRecorded).
func (c *Committer) acquireObserved(ctx context.Context, path, etag string, readAt time.Time, check func(context.Context, *KeyState) error, recorded bool) (*Lease, error) {
	start := time.Now()
	lease, err := c.acquire(ctx, path, etag, readAt, check, recorded)
	c.opts.Observer.AcquireDone(time.Since(start), err)
	return lease, err
}

func (c *Committer) acquire(ctx context.Context, path, etag string, readAt time.Time, check func(context.Context, *KeyState) error, recorded bool) (*Lease, error) {
	a := &attempt{
		key:       localKey{path, etag},
		owner:     c.ownerPrefix + "/" + strconv.FormatUint(c.attempts.Add(1), 10),
		budgetEnd: time.Now().Add(c.opts.WaitBudget),
		check:     check,
		readAt:    readAt,
		recorded:  recorded,
	}
	a.state = c.local.join(a.key)
	me := &turn{}
	hasTurn, bypassed, err := c.waitForLocalTurn(ctx, a, me)
	if err != nil {
		c.local.leave(a.key, a.state)
		return nil, err
	}
	if !hasTurn {
		me = nil
	}
	lease, err := c.acquireFromTable(ctx, a, bypassed)
	if err != nil {
		c.local.endTurn(a.state, me)
		c.local.leave(a.key, a.state)
		return nil, err
	}
	lease.turn = me
	c.local.holding(a.state, me, lease.held())

	if check != nil && !c.recheckNeedless(a, lease) {
		if err := check(ctx, lease.found); err != nil {
			if recorded {
				// Nothing was written: what the row vouched for still holds.
				lease.outcome = lease.found
			}
			relCtx, cancel := c.cleanupContext(ctx)
			relErr := lease.Release(relCtx)
			cancel()
			if relErr != nil {
				c.log.Warn().Err(relErr).Str("path", path).Str("etag", etag).
					Msg("release after a failed precondition re-check failed; the lease expires on its own")
			}
			return nil, err
		}
	}
	return lease, nil
}

// cleanupContext outlives the caller's cancellation, so a lease is released
// even when the client went away, but is still bounded.
func (c *Committer) cleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), c.opts.Timeout)
}

// waitForLocalTurn queues behind any goroutine of this process that is
// acquiring or holding the same key. It returns false, with the stale
// holder's lease, when it gave up queueing because that lease went stale (a
// leaked lease must not block this process longer than it would block
// another one); the table protocol then decides.
func (c *Committer) waitForLocalTurn(ctx context.Context, a *attempt, me *turn) (bool, *heldLease, error) {
	nextCheck := time.Now().Add(c.opts.PollInterval)
	for {
		ok, changed, held := c.local.takeTurn(a.state, me)
		if ok {
			return true, nil, nil
		}
		now := time.Now()
		if !held.staleAt.IsZero() && !now.Before(held.staleAt) {
			return false, &held, nil
		}
		wake := earliest(nextCheck, a.budgetEnd, held.staleAt)
		if err := sleepUntil(ctx, wake, changed); err != nil {
			return false, nil, err
		}
		now = time.Now()
		if !now.Before(a.budgetEnd) {
			return false, nil, c.budgetExceeded(a)
		}
		if !now.Before(nextCheck) {
			if err := a.runCheck(ctx); err != nil {
				return false, nil, err
			}
			nextCheck = now.Add(c.opts.PollInterval)
		}
	}
}

// acquireFromTable runs steps 2–3 of SPEC §3 against the table. stale, when
// set, is a lease of this process that went stale: if the row still shows
// it, this process has seen that generation since it wrote it.
//
// Before taking over a released row, it checks the precondition (step 3's
// check, at the moment the object most likely changed): a waiter whose
// ETag moved answers 412 without writing to the table twice (take over,
// release) to learn it. Local waiters check one at a time, not all at once
// when the holder lets go: on a hot key, checking them all sends the losers
// back sooner and in greater numbers, and costs a quarter of the commits
// per second.
func (c *Committer) acquireFromTable(ctx context.Context, a *attempt, stale *heldLease) (*Lease, error) {
	var (
		row       *Record // the row as last read; nil when it has to be (re)created
		tryCreate = true
		firstSeen time.Time // monotonic time this process first saw row's version
	)
	nextCheck := time.Now().Add(c.opts.PollInterval)
	for {
		if tryCreate {
			tryCreate = false
			lease, existing, err := c.firstWrite(ctx, a)
			if err != nil || lease != nil {
				return lease, err
			}
			if existing == nil {
				// Some DynamoDB implementations (dynalite) return no item
				// with a failed condition.
				if existing, err = c.get(ctx, a); err != nil {
					return nil, err
				}
			}
			row = existing
		}
		if row != nil {
			firstSeen = c.sawRow(a.key, row, stale)
			if row.Released || time.Since(firstSeen) >= c.opts.staleAfter(row.Timeout) {
				lease, current, err := c.takeOverRow(ctx, a, row)
				if err != nil || lease != nil {
					return lease, err
				}
				seenGen := row.Generation
				row, tryCreate = current, current == nil
				if current == nil || current.Generation != seenGen {
					continue
				}
				// A table that refuses a takeover yet shows the generation
				// we conditioned on must not make us spin: watch it afresh.
				firstSeen = time.Now()
				c.seen.restart(a.key, current, firstSeen)
			}
		}

		wake := earliest(nextCheck, a.budgetEnd)
		if row != nil {
			wake = earliest(wake, firstSeen.Add(c.opts.staleAfter(row.Timeout)))
		}
		if err := sleepUntil(ctx, wake, c.local.changedChan(a.state)); err != nil {
			return nil, err
		}
		now := time.Now()
		if row != nil && !row.Released && now.Sub(firstSeen) >= c.opts.staleAfter(row.Timeout) {
			continue // the takeover is due; it needs no fresh read
		}
		if !now.Before(a.budgetEnd) {
			return nil, c.budgetExceeded(a)
		}
		if !now.Before(nextCheck) {
			if err := a.runCheck(ctx); err != nil {
				return nil, err
			}
			nextCheck = now.Add(c.opts.PollInterval)
		}
		current, err := c.get(ctx, a)
		if err != nil {
			return nil, err
		}
		row, tryCreate = current, current == nil
	}
}

// sawRow returns when this process first saw row's version, in this Acquire
// or an earlier one. stale, when set, is a lease of this process that went
// stale: if the row still shows it, this process has seen that version since
// it wrote it.
func (c *Committer) sawRow(k localKey, row *Record, stale *heldLease) time.Time {
	if row.Released {
		// Taken over at once; nothing to remember.
		c.seen.forget(k)
		return time.Now()
	}
	now := time.Now()
	first := c.seen.firstSeen(k, row, now, c.opts.staleAfter(row.Timeout))
	if row.Unreadable != "" && first.Equal(now) {
		// Once per sighting of the row's version, not once per poll.
		c.log.Warn().Str("path", k.path).Str("etag", k.etag).Str("problem", row.Unreadable).
			Dur("held_for", c.opts.staleAfter(row.Timeout)).
			Msg("lease row is unreadable; it counts as held, and is taken over once that wait has passed")
	}
	if stale != nil && row.Generation == stale.generation && row.Owner == stale.owner && stale.acquired.Before(first) {
		c.seen.backdate(k, row, stale.acquired)
		first = stale.acquired
	}
	return first
}

// takeOverRow takes row over: a released row once the precondition still
// holds, a stale one at once. Winning it ends what this process remembers of
// the row; losing returns the row as it now is (nil when gone).
func (c *Committer) takeOverRow(ctx context.Context, a *attempt, row *Record) (*Lease, *Record, error) {
	if row.Released && !unsafeTrustStateRead {
		if err := a.checkOn(ctx, trustedKeyState(row)); err != nil {
			return nil, nil, err
		}
	}
	lease, current, err := c.takeOver(ctx, a, row, row.Released)
	if lease != nil {
		c.seen.forget(a.key)
	}
	return lease, current, err
}

// firstWrite is create, or for a recorded attempt createOrTake where the
// table has it.
func (c *Committer) firstWrite(ctx context.Context, a *attempt) (*Lease, *Record, error) {
	if a.recorded {
		if lease, existing, ok, err := c.createOrTake(ctx, a); ok {
			return lease, existing, err
		}
	}
	return c.create(ctx, a)
}

// create writes a first generation (generation.go). It returns the lease,
// or the existing row (possibly nil) when someone has it.
func (c *Committer) create(ctx context.Context, a *attempt) (*Lease, *Record, error) {
	r := c.record(a, firstGeneration(), false)
	sentAt := time.Now()
	call, done := tableCall(ctx)
	existing, err := c.table.Create(call, r)
	done()
	if err == nil || wroteIt(existing, r) {
		lease := c.newLease(a, r, sentAt)
		lease.createdBy = time.Now()
		return lease, nil, nil
	}
	if !errors.Is(err, ErrConditionFailed) {
		c.abandoned.add(r) // the write may still land, held by nobody
		return nil, nil, c.storeError(ctx, "create", err)
	}
	return nil, existing, nil
}

// takeOver writes the seen row's generation+1 if the row is still the one
// seen (its generation, and its Fence: fence.go); released is whether that
// generation was marked released (for the Observer).
func (c *Committer) takeOver(ctx context.Context, a *attempt, row *Record, released bool) (*Lease, *Record, error) {
	seen := row.Generation
	r := c.record(a, seen+1, false)
	r.Fence = FenceOf(row)
	sentAt := time.Now()
	call, done := tableCall(ctx)
	current, err := c.table.Replace(call, r, seen)
	done()
	if err == nil || wroteIt(current, r) {
		c.opts.Observer.TookOver(released)
		c.log.Debug().Str("path", a.key.path).Str("etag", a.key.etag).Uint64("generation", r.Generation).
			Msg("took over lease")
		lease := c.newLease(a, r, sentAt)
		lease.found = trustedKeyState(row)
		lease.carried = c.sealedReceiptOf(row)
		lease.tookOverHeld = !row.Released
		return lease, nil, nil
	}
	if !errors.Is(err, ErrConditionFailed) {
		c.abandoned.add(r) // the write may still land, held by nobody
		return nil, nil, c.storeError(ctx, "replace", err)
	}
	return nil, current, nil
}

func (c *Committer) get(ctx context.Context, a *attempt) (*Record, error) {
	call, done := tableCall(ctx)
	r, err := c.table.Get(call, a.key.path, a.key.etag)
	done()
	if err != nil {
		return nil, c.storeError(ctx, "get", err)
	}
	return r, nil
}

// wroteIt tells whether a row reported by a failed conditional write is the
// one we tried to write: an SDK retry of a write whose first attempt landed
// fails its condition against our own row. The owner carries this
// Committer's random token, so a row another process wrote never matches,
// however alike the two processes' hostnames, PIDs and attempt counts.
func wroteIt(current *Record, attempted Record) bool {
	return current != nil && current.Owner == attempted.Owner && current.Generation == attempted.Generation &&
		current.Released == attempted.Released
}

func (c *Committer) record(a *attempt, generation uint64, released bool) Record {
	return Record{
		Path:       a.key.path,
		ETag:       a.key.etag,
		Generation: generation,
		Timeout:    c.opts.Timeout,
		TTL:        time.Now().Add(c.opts.TTL),
		Owner:      a.owner,
		Released:   released,
	}
}

func (c *Committer) storeError(ctx context.Context, op string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("lease table %s: %w", op, ctxErr)
	}
	var se *StoreError
	if errors.As(err, &se) {
		return err
	}
	return &StoreError{Op: op, Err: err}
}

func (c *Committer) budgetExceeded(a *attempt) error {
	return fmt.Errorf("%w: waited %s for the lease on %q (etag %s)", ErrWaitBudgetExceeded, c.opts.WaitBudget, a.key.path, a.key.etag)
}

func (a *attempt) runCheck(ctx context.Context) error { return a.checkOn(ctx, nil) }

// checkOn runs the check on the key state a row vouches for (nil: none).
func (a *attempt) checkOn(ctx context.Context, vouched *KeyState) error {
	if a.check == nil {
		return nil
	}
	return a.check(ctx, vouched)
}

// sleepUntil waits until t, until wake is closed, or until ctx ends.
func sleepUntil(ctx context.Context, t time.Time, wake <-chan struct{}) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-wake:
	case <-timer.C:
	}
	return nil
}

// earliest returns the earliest non-zero time.
func earliest(first time.Time, rest ...time.Time) time.Time {
	out := first
	for _, t := range rest {
		if !t.IsZero() && (out.IsZero() || t.Before(out)) {
			out = t
		}
	}
	return out
}

package arrowrs

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrAlreadyExists is arrow-rs's Error::AlreadyExists: a create found the
// object there (check_precondition with no ETag).
var ErrAlreadyExists = errors.New("arrow-rs: already exists")

// ErrPrecondition is arrow-rs's Error::Precondition: an update found
// another ETag, or no object.
var ErrPrecondition = errors.New("arrow-rs: precondition failed")

// Head is check_precondition's HEAD of path on the store: the object's ETag
// as the store reports it (quotes included), or found false for a 404.
type Head func(ctx context.Context, path string) (etag string, found bool, err error)

// Options are the DynamoCommit settings that conditional_op uses beyond
// try_lock's; zero values take arrow-rs's defaults.
type Options struct {
	MaxClockSkewRate int           // arrow-rs's default: 3
	TestInterval     time.Duration // arrow-rs's default: 100 ms
}

func (o Options) withDefaults() Options {
	if o.MaxClockSkewRate == 0 {
		o.MaxClockSkewRate = 3
	}
	if o.TestInterval == 0 {
		o.TestInterval = 100 * time.Millisecond
	}
	return o
}

// ConditionalOp is arrow-rs's conditional_op, by which DynamoCommit guards
// a put with PutMode::Create (etag "") or PutMode::Update (etag as HEAD
// reported it) and copy_if_not_exists:
//
//  1. check_precondition (a HEAD), failing fast;
//  2. try_lock (path, etag or "*");
//  3. on a conflict, every TestInterval check_precondition again, and once
//     the holder's timeout × MaxClockSkewRate has passed since the
//     conflict, reclaim the row on its generation (back to 2);
//  4. holding the lock, run op (the store write, unconditional) within the
//     lease's timeout. There is no check after the lock is won: the
//     protocol relies on every writer of (path, etag) holding that row
//     until its TTL, and a row is never released.
func (c Commit) ConditionalOp(ctx context.Context, o Options, head Head, path, etag string, op func(ctx context.Context) error) error {
	o = o.withDefaults()
	if err := checkPrecondition(ctx, head, path, etag); err != nil {
		return err
	}
	var previous *Lease
	for {
		acquire := time.Now()
		lease, ok, err := c.TryLock(ctx, path, etag, previous)
		if err != nil {
			return err
		}
		if ok {
			return runHeld(ctx, acquire, lease, path, op)
		}
		if err := c.waitOut(ctx, o, head, path, etag, lease); err != nil {
			return err
		}
		previous = &lease
	}
}

// runHeld runs op under a won lease: arrow-rs gives it until the lease's
// timeout, counted from just before the lock request was sent.
func runHeld(ctx context.Context, acquire time.Time, lease Lease, path string, op func(ctx context.Context) error) error {
	opCtx, cancel := context.WithDeadline(ctx, acquire.Add(lease.Timeout))
	defer cancel()
	if err := op(opCtx); err != nil {
		return fmt.Errorf("arrow-rs conditional op on %q under generation %d: %w", path, lease.Generation, err)
	}
	return nil
}

// waitOut is conditional_op's conflict loop: it returns nil once the
// holder's lease may be reclaimed, or the precondition's failure.
func (c Commit) waitOut(ctx context.Context, o Options, head Head, path, etag string, held Lease) error {
	expiry := time.Now().Add(held.Timeout * time.Duration(o.MaxClockSkewRate))
	ticker := time.NewTicker(o.TestInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("arrow-rs waiting on %q: %w", path, ctx.Err())
		case <-ticker.C:
		}
		if err := checkPrecondition(ctx, head, path, etag); err != nil {
			return err
		}
		if time.Now().After(expiry) {
			return nil
		}
	}
}

// checkPrecondition is arrow-rs's check_precondition.
func checkPrecondition(ctx context.Context, head Head, path, etag string) error {
	actual, found, err := head(ctx, path)
	if err != nil {
		return fmt.Errorf("arrow-rs HEAD %q: %w", path, err)
	}
	switch {
	case etag == "" && found:
		return fmt.Errorf("%w: %s", ErrAlreadyExists, path)
	case etag == "":
		return nil
	case !found:
		return fmt.Errorf("%w: object at location %s not found", ErrPrecondition, path)
	case actual != etag:
		return fmt.Errorf("%w: %s does not match %s", ErrPrecondition, actual, etag)
	}
	return nil
}

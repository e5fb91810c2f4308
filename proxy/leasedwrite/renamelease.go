package leasedwrite

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/precondition"
	"github.com/s3cond/s3cond/s3err"
)

// renameLease is one lease a rename takes: a key's rename lock, or its
// lease row of the version the rename found (the row every conditional
// writer of that version takes), with the re-check that the key is still
// at that version.
type renameLease struct {
	path, etag string
	check      func(context.Context) error
}

// errRenameStateMoved: a key changed between the rename's reads and its
// leases; the client retries (409, as S3 answers a conflicting write).
var errRenameStateMoved = errors.New("rename: a key moved while its lease was taken")

// acquireRenameLeases takes leases in the protocol's key order (path, then
// sort key), so renames of overlapping keys never wait for each other in
// a cycle. On an error the leases already taken are released.
func (w *Writer) acquireRenameLeases(ctx context.Context, reqs []renameLease) ([]*dynamolease.Lease, error) {
	slices.SortFunc(reqs, func(a, b renameLease) int {
		return cmp.Or(cmp.Compare(a.path, b.path), cmp.Compare(a.etag, b.etag))
	})
	leases := make([]*dynamolease.Lease, 0, len(reqs))
	for _, r := range reqs {
		l, err := w.leases.Acquire(ctx, r.path, r.etag, r.check)
		if err != nil {
			w.releaseRenameLeases(ctx, leases)
			return nil, err
		}
		leases = append(leases, l)
	}
	return leases, nil
}

// releaseRenameLeases releases leases whose writes have ended with a known
// outcome; a failure leaves the row to expire, as any lease's.
func (w *Writer) releaseRenameLeases(ctx context.Context, leases []*dynamolease.Lease) {
	relCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.leases.Options().Timeout)
	defer cancel()
	for _, l := range leases {
		if err := l.Release(relCtx); err != nil {
			w.log.Warn().Err(err).Str("path", l.Path()).Msg("rename lease release failed; the lease expires on its own")
		}
	}
}

// keepRenameLeases renews leases until stop is called.
func keepRenameLeases(ctx context.Context, leases []*dynamolease.Lease) (stop func()) {
	stops := make([]func(), 0, len(leases))
	for _, l := range leases {
		stops = append(stops, l.KeepAlive(ctx))
	}
	return func() {
		for _, s := range stops {
			s()
		}
	}
}

// versionCheck is the re-check of a key's version lease: the key must
// still be at etag ("*": absent). A missing source is S3's 404; any other
// move is a conflict.
func versionCheck(store RenameStore, key, etag string, isSource bool) func(context.Context) error {
	return func(ctx context.Context) error {
		s, err := store.Head(ctx, key)
		if err != nil {
			return err
		}
		switch {
		case isSource && !s.Exists:
			return s3err.New(s3err.NoSuchKey)
		case etag == "*" && !s.Exists, s.Exists && precondition.ETagsEqual(s.ETag, etag):
			return nil
		}
		return errRenameStateMoved
	}
}

// versionETag is the sort key of the lease row of a key's state.
func versionETag(s precondition.ObjectState) string {
	if !s.Exists {
		return "*"
	}
	return precondition.CanonicalETag(s.ETag)
}

// sizeRenameLeases lengthens every lease of a rename to cover the store's
// copy of size bytes, as a leased CopyObject's lease is sized: a rename
// whose process dies mid-copy leaves rows that nobody takes over before
// the store can have finished the copy. It returns the length.
func (w *Writer) sizeRenameLeases(ctx context.Context, leases []*dynamolease.Lease, size int64) (time.Duration, error) {
	length := w.leaseLengthFor(size)
	for _, l := range leases {
		if err := l.Extend(ctx, length); err != nil {
			return 0, leaseError(err)
		}
	}
	return length, nil
}

// untilLeaseLost is ctx, cancelled as soon as any of leases is lost: the
// rename's store requests stop then, and its intent is left to the row's
// new holder.
func untilLeaseLost(ctx context.Context, leases []*dynamolease.Lease) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	for _, l := range leases {
		go func() {
			select {
			case <-l.Lost():
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return ctx, cancel
}

package leasedwrite

import (
	"context"
	"errors"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/precondition"
	"github.com/s3cond/s3cond/s3err"
)

// RenameObject (docs/spec.md, "RenameObject"): under the rename locks and
// version leases of both keys, taken in key order, a server-side copy of
// the source over the destination and a delete of the source, with an
// intent in the lease table (renameintent.go) that lets the next holder
// of either key finish a rename whose holder vanished in between.

// renameTokenTTL is how long a client token's answer is kept: past the
// SDKs' retry windows (seconds to a few minutes), bounded so the table
// holds at most this long's worth of tokens.
const renameTokenTTL = 15 * time.Minute

// Rename runs a RenameObject: nil when its answer is 200 (the object
// moved, or the client token was already used with the same parameters),
// else the error to answer.
func (w *Writer) Rename(req RenameRequest) error {
	if req.TokenPath != "" {
		release, err := w.holdRenameToken(req)
		if err != nil {
			return err
		}
		defer release()
		if replayed, err := w.replayRenameToken(req); err != nil || replayed {
			return err
		}
	}
	if err := w.rename(req); err != nil {
		return err
	}
	if req.TokenPath != "" {
		if err := w.leases.PutRenameToken(req.Ctx, req.TokenPath, req.TokenDigest, renameTokenTTL); err != nil && !errors.Is(err, dynamolease.ErrNoteTaken) {
			w.log.Warn().Err(err).Str("request_id", req.ID).Msg("the rename's client token was not recorded; a retry renames again")
		}
	}
	return nil
}

// holdRenameToken takes the client token's rename lock (the row
// (TokenPath, RenameLockETag), which no object's lease shares) and keeps
// it until release, which the rename calls once its token is recorded: a
// second request with the same token waits there for the first and then
// replays its answer, rather than racing it to a 404. The lock is taken
// before any key's lease and by renames alone, so it joins no cycle.
func (w *Writer) holdRenameToken(req RenameRequest) (release func(), err error) {
	lock, err := w.leases.Acquire(req.Ctx, req.TokenPath, dynamolease.RenameLockETag, nil)
	if err != nil {
		return nil, leaseError(err)
	}
	stop := lock.KeepAlive(context.WithoutCancel(req.Ctx))
	return func() {
		stop()
		w.releaseRenameLeases(req.Ctx, []*dynamolease.Lease{lock})
	}, nil
}

// replayRenameToken answers a token already used by this principal: 200
// doing nothing more when the parameters are the same, 400
// IdempotencyParameterMismatch when they differ.
func (w *Writer) replayRenameToken(req RenameRequest) (replayed bool, err error) {
	digest, found, err := w.leases.RenameToken(req.Ctx, req.TokenPath)
	switch {
	case err != nil:
		return false, leaseError(err)
	case !found:
		return false, nil
	case digest != req.TokenDigest:
		return false, s3err.New(s3err.IdempotencyParameterMismatch)
	}
	return true, nil
}

// rename checks both keys, takes their leases, finishes any rename of
// either key left unfinished, and moves the object.
func (w *Writer) rename(req RenameRequest) error {
	ctx, store := req.Ctx, req.Store
	src, dst, err := renameStates(ctx, store, req.Source, req.Destination)
	if err != nil {
		return err
	}
	if err := req.Evaluate(src, dst); err != nil {
		return err
	}
	leases, err := w.acquireRenameLeases(ctx, renameLeases(req, src, dst))
	if err != nil {
		return leaseError(err)
	}
	// From here the rename runs to its end whatever the client does: a
	// half-done rename is what the intent is for, not what a hang-up makes.
	// Its store requests go out only while half of its (sized) leases
	// remain, and stop if one is lost.
	length, err := w.sizeRenameLeases(ctx, leases, src.Size)
	if err != nil {
		w.releaseRenameLeases(ctx, leases)
		return err
	}
	work, cancel := context.WithTimeout(context.WithoutCancel(ctx), length/2)
	work, cancelOnLoss := untilLeaseLost(work, leases)
	stop := keepRenameLeases(work, leases)
	known := true
	var copiedLease *dynamolease.Lease
	defer func() {
		stop()
		cancelOnLoss()
		cancel()
		if copiedLease != nil {
			leases = append(leases, copiedLease)
		}
		if known {
			w.releaseRenameLeases(ctx, leases)
		}
	}()
	if finished, err := w.finishPending(work, store, req.Source, req.Destination); err != nil {
		return leaseError(err)
	} else if finished {
		if err := recheckRename(work, req, src, dst); err != nil {
			return err
		}
	}
	known, copiedLease, err = w.moveObject(work, req, src, dst)
	return err
}

// renameStates reads both keys of a rename.
func renameStates(ctx context.Context, store RenameStore, source, destination string) (src, dst precondition.ObjectState, err error) {
	if src, err = store.Head(ctx, source); err != nil {
		return src, dst, err
	}
	dst, err = store.Head(ctx, destination)
	return src, dst, err
}

// renameLeases are the four leases of a rename: each key's rename lock and
// its version lease.
func renameLeases(req RenameRequest, src, dst precondition.ObjectState) []renameLease {
	store := req.Store
	srcPath, dstPath := store.LeasePath(req.Source), store.LeasePath(req.Destination)
	leases := []renameLease{
		{path: srcPath, etag: dynamolease.RenameLockETag},
		{path: dstPath, etag: dynamolease.RenameLockETag},
		{path: srcPath, etag: versionETag(src), check: versionCheck(store, req.Source, versionETag(src), true)},
		{path: dstPath, etag: versionETag(dst), check: versionCheck(store, req.Destination, versionETag(dst), false)},
	}
	// The destination's version once copied, as stores copy an object
	// uploaded whole (its MD5, the source's ETag): a writer that read the
	// copy and writes on it takes this row, held by the rename, so a
	// rename stopped after its copy is met there too (renamefinish.go).
	if copied := versionETag(src); copied != versionETag(dst) {
		leases = append(leases, renameLease{path: dstPath, etag: copied})
	}
	return leases
}

// recheckRename reads both keys again after an unfinished rename of one
// of them was finished: the rename goes on only if both are where its
// leases say.
func recheckRename(ctx context.Context, req RenameRequest, src, dst precondition.ObjectState) error {
	nowSrc, nowDst, err := renameStates(ctx, req.Store, req.Source, req.Destination)
	switch {
	case err != nil:
		return err
	case !nowSrc.Exists:
		return s3err.New(s3err.NoSuchKey)
	case versionETag(nowSrc) != versionETag(src) || versionETag(nowDst) != versionETag(dst):
		return leaseError(errRenameStateMoved)
	}
	return nil
}

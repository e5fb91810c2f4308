package leasedwrite

import (
	"context"
	"errors"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/precondition"
	"github.com/s3cond/s3cond/s3err"
)

// moveObject copies and deletes under the leases, the intent recorded
// first. known is false when a store request's outcome is unknown: the
// leases are then left to expire and the intent to whoever holds a key
// next.
func (w *Writer) moveObject(ctx context.Context, req RenameRequest, src, dst precondition.ObjectState) (known bool, copiedLease *dynamolease.Lease, err error) {
	store := req.Store
	intent := renameIntent{
		Bucket: req.Bucket, Source: req.Source, Destination: req.Destination,
		SourceETag: src.ETag, Stage: stageCopying,
	}
	if dst.Exists {
		intent.DestinationBefore = dst.ETag
	}
	if err := w.writeIntent(ctx, store, intent); err != nil {
		if errors.Is(err, dynamolease.ErrKeyStatesUnsupported) {
			return true, nil, s3err.Newf(s3err.NotImplemented, "RenameObject needs a lease table whose rows carry key states; this one (arrow-rs keys) cannot.")
		}
		return true, nil, leaseError(err)
	}
	if known, err := store.Copy(ctx, req.Source, req.Destination, src.ETag); err != nil {
		if known {
			err = errors.Join(err, w.clearIntent(ctx, store, intent))
		}
		return known, nil, err
	}
	if copied, err := store.Head(ctx, req.Destination); err == nil && copied.Exists {
		intent.Stage, intent.CopyETag = stageCopied, copied.ETag
		if err := w.writeIntent(ctx, store, intent); err != nil {
			w.log.Warn().Err(err).Str("request_id", req.ID).Msg("the rename's copy could not be recorded; its intent still says copying")
		}
		copiedLease = w.leaseCopiedVersion(ctx, req, src, copied)
	}
	if _, err := store.Delete(ctx, req.Source); err != nil {
		return false, copiedLease, err // both copies exist: the intent finishes it
	}
	if err := w.clearIntent(ctx, store, intent); err != nil {
		return false, copiedLease, leaseError(err)
	}
	return true, copiedLease, nil
}

// leaseCopiedVersion takes the destination's row of the version the copy
// made when the store gave the copy another ETag than the source's (a
// multipart source), which renameLeases did not foresee: out of key
// order, so a writer holding it makes this wait at most its wait budget,
// after which the rename goes on without it (nil).
func (w *Writer) leaseCopiedVersion(ctx context.Context, req RenameRequest, src, copied precondition.ObjectState) *dynamolease.Lease {
	if versionETag(copied) == versionETag(src) {
		return nil
	}
	l, err := w.leases.Acquire(ctx, req.Store.LeasePath(req.Destination), versionETag(copied), nil)
	if err != nil {
		w.log.Warn().Err(err).Str("request_id", req.ID).Msg("the rename could not lease its copy's version; a writer of it does not wait for the delete")
		return nil
	}
	return l
}

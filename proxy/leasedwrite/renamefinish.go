package leasedwrite

import (
	"context"

	"github.com/s3cond/s3cond/dynamolease"
)

// finishLeftRenames runs before a write under a lease taken over from a
// holder that never released it: that holder may have been a RenameObject
// stopped between its copy and its delete, whose intent the lease table
// keeps (docs/spec.md, "RenameObject"). It is finished first, so no write
// of either key lands in the middle of it; the key may have moved then,
// so the write's condition is checked again under the lease.
func (w *Writer) finishLeftRenames(req Request, lease *dynamolease.Lease, cond Condition) error {
	if req.Renames == nil || !lease.TookOverHeld() {
		return nil
	}
	finished, err := w.finishRenamesOf(req.Ctx, req.Renames, req.Target.Bucket, req.Target.Key)
	if err != nil {
		return leaseError(err)
	}
	if !finished {
		return nil
	}
	if err := leaseCheck(req, req.Target, cond, lease.ETag())(req.Ctx); err != nil {
		return leaseError(err)
	}
	return nil
}

// finishRenamesOf finishes an intent on key's row under both of its keys'
// rename locks, read again once they are held (a live rename, or another
// finisher, may have cleared it meanwhile); finished says whether there
// was one.
func (w *Writer) finishRenamesOf(ctx context.Context, store RenameStore, bucket, key string) (finished bool, err error) {
	i, err := w.pendingIntent(ctx, store, key)
	if err != nil || i == nil {
		return false, err
	}
	locks, err := w.acquireRenameLeases(ctx, []renameLease{
		{path: store.LeasePath(i.Source), etag: dynamolease.RenameLockETag},
		{path: store.LeasePath(i.Destination), etag: dynamolease.RenameLockETag},
	})
	if err != nil {
		return false, err
	}
	defer w.releaseRenameLeases(ctx, locks)
	// The locks outlive the finish: renewed while it runs, and its store
	// requests stopped should one be lost.
	defer keepRenameLeases(ctx, locks)()
	guarded, stop := untilLeaseLost(ctx, locks)
	defer stop()
	if i, err = w.pendingIntent(guarded, store, key); err != nil || i == nil {
		return false, err
	}
	return true, w.finishIntent(guarded, store, *i)
}

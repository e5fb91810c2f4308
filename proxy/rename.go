package proxy

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/precondition"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
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

// serveRenameObject answers a verified, authorised RenameObject.
func (p *Proxy) serveRenameObject(c *call) {
	req, err := parseRename(c)
	if err == nil && p.leased == nil {
		err = s3err.Newf(s3err.NotImplemented, "RenameObject needs a lease store, and none is configured.")
	}
	if err != nil {
		p.fail(c, err)
		return
	}
	if req.token != "" {
		if replayed, err := p.replayRenameToken(c, req); err != nil || replayed {
			if err != nil {
				p.fail(c, err)
			}
			return
		}
	}
	if err := p.rename(c, req); err != nil {
		p.fail(c, err)
		return
	}
	if req.token != "" {
		path := tokenPath(c.auth.AccessKeyID, req.bucket, req.token)
		if err := p.leaseOptions.Leases.PutRenameToken(c.r.Context(), path, req.parametersDigest(), renameTokenTTL); err != nil && !errors.Is(err, dynamolease.ErrNoteTaken) {
			p.log.Warn().Err(err).Str("request_id", c.id).Msg("the rename's client token was not recorded; a retry renames again")
		}
	}
	answerRenamed(c)
}

// replayRenameToken answers a token already used by this principal: 200
// doing nothing more when the parameters are the same, 400
// IdempotencyParameterMismatch when they differ.
func (p *Proxy) replayRenameToken(c *call, req renameRequest) (replayed bool, err error) {
	digest, found, err := p.leaseOptions.Leases.RenameToken(c.r.Context(), tokenPath(c.auth.AccessKeyID, req.bucket, req.token))
	switch {
	case err != nil:
		return false, leasedwrite.LeaseError(err)
	case !found:
		return false, nil
	case digest != req.parametersDigest():
		return false, s3err.New(s3err.IdempotencyParameterMismatch)
	}
	answerRenamed(c)
	return true, nil
}

// answerRenamed is RenameObject's answer: 200, no body.
func answerRenamed(c *call) {
	c.w.Header().Set("Content-Length", "0")
	c.w.WriteHeader(http.StatusOK)
}

// rename checks both keys, takes their leases, finishes any rename of
// either key left unfinished, and moves the object.
func (p *Proxy) rename(c *call, req renameRequest) error {
	ctx, b := c.r.Context(), c.backend
	src, dst, err := b.renameStates(ctx, req.bucket, req.source, req.destination)
	if err != nil {
		return err
	}
	if err := req.evaluate(src, dst); err != nil {
		return err
	}
	leases, err := p.acquireRenameLeases(ctx, req.leases(b, src, dst))
	if err != nil {
		return leasedwrite.LeaseError(err)
	}
	// From here the rename runs to its end whatever the client does: a
	// half-done rename is what the intent is for, not what a hang-up makes.
	// Its store requests go out only while half of its (sized) leases
	// remain, and stop if one is lost.
	length, err := p.sizeRenameLeases(ctx, leases, src.Size)
	if err != nil {
		p.releaseRenameLeases(ctx, leases)
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
			p.releaseRenameLeases(ctx, leases)
		}
	}()
	if finished, err := p.finishPending(work, b, req.bucket, req.source, req.destination); err != nil {
		return leasedwrite.LeaseError(err)
	} else if finished {
		if err := p.recheckRename(work, b, req, src, dst); err != nil {
			return err
		}
	}
	known, copiedLease, err = p.moveObject(work, b, req, src, dst)
	return err
}

// evaluate applies the source's and the destination's conditions: S3's
// 404 for a missing source, 412 naming the failed condition.
func (r renameRequest) evaluate(src, dst precondition.ObjectState) error {
	if !src.Exists {
		return s3err.New(s3err.NoSuchKey)
	}
	lastModified := ""
	if !src.LastModified.IsZero() {
		lastModified = src.LastModified.UTC().Format(http.TimeFormat)
	}
	if failed := precondition.EvaluateRenameSource(r.header, src.ETag, lastModified); failed != "" {
		return s3err.Precondition(failed)
	}
	err := precondition.EvaluateRenameDestination(r.dstConds, r.header, dst)
	if e := s3err.As(err); err != nil && e.Code == s3err.NoSuchKey {
		// If-Match on a missing destination: the rename's 404 names its
		// source, so a destination that is not there fails its condition.
		return s3err.Precondition(precondition.HeaderIfMatch)
	}
	return err
}

// leases are the four leases of a rename: each key's rename lock and its
// version lease.
func (r renameRequest) leases(b *Backend, src, dst precondition.ObjectState) []renameLease {
	srcPath, dstPath := b.leasePath(renameTarget(r.bucket, r.source)), b.leasePath(renameTarget(r.bucket, r.destination))
	leases := []renameLease{
		{path: srcPath, etag: dynamolease.RenameLockETag},
		{path: dstPath, etag: dynamolease.RenameLockETag},
		{path: srcPath, etag: versionETag(src), check: versionCheck(b, r.bucket, r.source, versionETag(src), true)},
		{path: dstPath, etag: versionETag(dst), check: versionCheck(b, r.bucket, r.destination, versionETag(dst), false)},
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
func (p *Proxy) recheckRename(ctx context.Context, b *Backend, req renameRequest, src, dst precondition.ObjectState) error {
	nowSrc, nowDst, err := b.renameStates(ctx, req.bucket, req.source, req.destination)
	switch {
	case err != nil:
		return err
	case !nowSrc.Exists:
		return s3err.New(s3err.NoSuchKey)
	case versionETag(nowSrc) != versionETag(src) || versionETag(nowDst) != versionETag(dst):
		return leasedwrite.LeaseError(errRenameStateMoved)
	}
	return nil
}

// moveObject copies and deletes under the leases, the intent recorded
// first. known is false when a store request's outcome is unknown: the
// leases are then left to expire and the intent to whoever holds a key
// next.
func (p *Proxy) moveObject(ctx context.Context, b *Backend, req renameRequest, src, dst precondition.ObjectState) (known bool, copiedLease *dynamolease.Lease, err error) {
	intent := renameIntent{
		Bucket: req.bucket, Source: req.source, Destination: req.destination,
		SourceETag: src.ETag, Stage: stageCopying,
	}
	if dst.Exists {
		intent.DestinationBefore = dst.ETag
	}
	if err := p.writeIntent(ctx, b, intent); err != nil {
		if errors.Is(err, dynamolease.ErrKeyStatesUnsupported) {
			return true, nil, s3err.Newf(s3err.NotImplemented, "RenameObject needs a lease table whose rows carry key states; this one (arrow-rs keys) cannot.")
		}
		return true, nil, leasedwrite.LeaseError(err)
	}
	if known, err := b.copyForRename(ctx, req.bucket, req.source, req.destination, src.ETag); err != nil {
		if known {
			err = errors.Join(err, p.clearIntent(ctx, b, intent))
		}
		return known, nil, err
	}
	if copied, err := b.head(ctx, renameTarget(req.bucket, req.destination)); err == nil && copied.Exists {
		intent.Stage, intent.CopyETag = stageCopied, copied.ETag
		if err := p.writeIntent(ctx, b, intent); err != nil {
			p.log.Warn().Err(err).Msg("the rename's copy could not be recorded; its intent still says copying")
		}
		copiedLease = p.leaseCopiedVersion(ctx, b, req, src, copied)
	}
	if _, err := b.deleteForRename(ctx, req.bucket, req.source); err != nil {
		return false, copiedLease, err // both copies exist: the intent finishes it
	}
	if err := p.clearIntent(ctx, b, intent); err != nil {
		return false, copiedLease, leasedwrite.LeaseError(err)
	}
	return true, copiedLease, nil
}

// leaseCopiedVersion takes the destination's row of the version the copy
// made when the store gave the copy another ETag than the source's (a
// multipart source), which leases did not foresee: out of key order, so
// a writer holding it makes this wait at most its wait budget, after
// which the rename goes on without it (nil).
func (p *Proxy) leaseCopiedVersion(ctx context.Context, b *Backend, req renameRequest, src, copied precondition.ObjectState) *dynamolease.Lease {
	if versionETag(copied) == versionETag(src) {
		return nil
	}
	l, err := p.leaseOptions.Leases.Acquire(ctx, b.leasePath(renameTarget(req.bucket, req.destination)), versionETag(copied), nil)
	if err != nil {
		p.log.Warn().Err(err).Msg("the rename could not lease its copy's version; a writer of it does not wait for the delete")
		return nil
	}
	return l
}

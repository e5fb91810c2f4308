package proxy

import (
	"net/http"

	"github.com/s3cond/s3cond/precondition"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
	"github.com/s3cond/s3cond/s3err"
)

// RenameObject (docs/spec.md, "RenameObject"): proxy parses and
// authorises it and makes its store requests (renamestore.go);
// leasedwrite.Writer.Rename holds the leases, the intent and the client
// token's record.

// serveRenameObject answers a verified, authorised RenameObject.
func (p *Proxy) serveRenameObject(c *call) {
	req, err := parseRename(c)
	if err == nil && p.leased == nil {
		err = s3err.Newf(s3err.NotImplemented, "RenameObject needs a lease store, and none is configured.")
	}
	if err == nil && !c.backend.mode().Leases() {
		// The rename's leases order it only against leased writes; on a
		// backend served without leases a conditional PutObject of either
		// key would commit between its checks and its copy or delete.
		err = s3err.Newf(s3err.NotImplemented, "RenameObject needs leased conditional writes, and this backend is served without leases (its store checks conditions itself).")
	}
	if err == nil {
		err = p.leased.Rename(p.leasedRename(c, req))
	}
	if err != nil {
		p.fail(c, err)
		return
	}
	c.w.Header().Set("Content-Length", "0")
	c.w.WriteHeader(http.StatusOK)
}

// leasedRename describes a checked RenameObject to proxy/leasedwrite.
func (p *Proxy) leasedRename(c *call, req renameRequest) leasedwrite.RenameRequest {
	lr := leasedwrite.RenameRequest{
		ID: c.id, Ctx: c.r.Context(), Bucket: req.bucket, Source: req.source, Destination: req.destination,
		Store: renameStore{b: c.backend, bucket: req.bucket}, Evaluate: req.evaluate,
	}
	if req.token != "" {
		lr.TokenPath, lr.TokenDigest = tokenPath(c.auth.AccessKeyID, req.bucket, req.token), req.parametersDigest()
	}
	return lr
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

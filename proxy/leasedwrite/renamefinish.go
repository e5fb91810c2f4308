package leasedwrite

import (
	"github.com/s3cond/s3cond/dynamolease"
)

// finishLeftRenames runs before a write under a lease taken over from a
// holder that never released it: that holder may have been a RenameObject
// stopped between its copy and its delete, whose intent the lease table
// keeps (docs/spec.md, "RenameObject"). It is finished first, so no write
// of either key lands in the middle of it; the key may have moved then,
// so the write's condition is checked again under the lease.
func finishLeftRenames(req Request, lease *dynamolease.Lease, cond Condition) error {
	if req.FinishRenames == nil || !lease.TookOverHeld() {
		return nil
	}
	finished, err := req.FinishRenames(req.Ctx)
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

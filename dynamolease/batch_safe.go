//go:build !s3cond_unsafe_batch_takes_held_rows

package dynamolease

import "context"

// unsafeTakeHeldRow is nil in every real build: see batch_unsafe.go.
func (c *Committer) unsafeTakeHeldRow(context.Context, LeaseRequest, *Record) *Lease { return nil }

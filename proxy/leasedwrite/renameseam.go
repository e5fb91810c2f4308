package leasedwrite

import (
	"context"

	"github.com/s3cond/s3cond/precondition"
)

// RenameStore is what a RenameObject asks of the store, in one bucket:
// proxy's Backend implements it with s3cond's own signed requests. Like
// StateReader, it knows HTTP so that this package does not.
type RenameStore interface {
	// Head reads key's state (a missing object is the zero ObjectState).
	Head(ctx context.Context, key string) (precondition.ObjectState, error)
	// Copy copies source over destination, metadata kept, on the
	// condition that the source is still at sourceETag where the store
	// checks it. known is false when the outcome is unknown (the request
	// failed in flight): the copy may yet land.
	Copy(ctx context.Context, source, destination, sourceETag string) (known bool, err error)
	// Delete deletes key; known is false when the outcome is unknown.
	Delete(ctx context.Context, key string) (known bool, err error)
	// LeasePath names key's lease row (proxy's Backend.leasePath).
	LeasePath(key string) string
}

// RenameRequest is one RenameObject as proxy parsed and authorised it.
type RenameRequest struct {
	// ID is the request's x-amz-request-id, for logs.
	ID string
	// Ctx is the client request's context. Once the rename's leases are
	// held it runs to its end whatever the client does.
	Ctx                         context.Context
	Bucket, Source, Destination string
	Store                       RenameStore
	// Evaluate applies the request's conditions to the states of the
	// source and the destination it read: nil to go on, else the answer.
	Evaluate func(src, dst precondition.ObjectState) error
	// TokenPath names the lease table row of the request's client token
	// ("" when none was sent), bound to its principal; TokenDigest is the
	// request's parameters, which a replay of the token must repeat.
	TokenPath, TokenDigest string
}

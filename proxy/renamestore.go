package proxy

import (
	"context"
	"io"
	"net/http"
	"net/url"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/precondition"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
	"github.com/s3cond/s3cond/s3err"
)

// The store requests of a rename: s3cond's own, signed by the re-signer,
// each under the leases of both keys (leasedwrite/rename.go).

// renameStore is a rename's bucket of a store (leasedwrite.RenameStore).
type renameStore struct {
	b      *Backend
	bucket string
}

var _ leasedwrite.RenameStore = renameStore{}

func (s renameStore) Head(ctx context.Context, key string) (precondition.ObjectState, error) {
	return s.b.head(ctx, renameTarget(s.bucket, key))
}

func (s renameStore) Copy(ctx context.Context, source, destination, sourceETag string) (known bool, err error) {
	return s.b.copyForRename(ctx, s.bucket, source, destination, sourceETag)
}

func (s renameStore) Delete(ctx context.Context, key string) (known bool, err error) {
	return s.b.deleteForRename(ctx, s.bucket, key)
}

func (s renameStore) LeasePath(key string) string { return s.b.leasePath(renameTarget(s.bucket, key)) }

// renameTarget is the object of a rename's key in the call's bucket.
func renameTarget(bucket, key string) operation.Target {
	return operation.Target{Bucket: bucket, Key: key, RawKey: escapeKey(key)}
}

// copyForRename copies source over destination in the store, metadata
// kept (x-amz-metadata-directive: COPY, S3's default), on the condition
// that the source is still at sourceETag where the store checks it.
// known is false when the outcome is unknown (the request failed in
// flight): the copy may yet land.
func (b *Backend) copyForRename(ctx context.Context, bucket, source, destination, sourceETag string) (known bool, err error) {
	header := make(http.Header, 6)
	header.Set("X-Amz-Copy-Source", url.PathEscape(b.BackendBucket(bucket))+"/"+escapeKey(source))
	header.Set("X-Amz-Metadata-Directive", "COPY")
	header.Set("X-Amz-Copy-Source-If-Match", sourceETag)
	req := b.newRequest(ctx, http.MethodPut, bucket, escapeKey(destination), "", header)
	resp, err := b.send(req)
	if err != nil {
		return false, backendError(err)
	}
	defer resp.Body.Close()
	// A copy's 200 may carry an error document (S3 sends one when the copy
	// fails after its answer began): read it to its end, boundedly.
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return false, backendError(err)
	}
	switch {
	case resp.StatusCode == http.StatusOK && !containsErrorDocument(body):
		return true, nil
	case resp.StatusCode == http.StatusOK:
		return false, s3err.Newf(s3err.BadGateway, "The backend's copy for the rename answered 200 with an error document.")
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusPreconditionFailed:
		return true, s3err.New(s3err.ConditionalRequestConflict) // the source moved under the lease
	case resp.StatusCode >= 500:
		return false, s3err.Newf(s3err.BadGateway, "The backend answered the rename's copy with status %d.", resp.StatusCode)
	}
	return true, s3err.Newf(s3err.BadGateway, "The backend answered the rename's copy with status %d.", resp.StatusCode)
}

func containsErrorDocument(body []byte) bool {
	for i := 0; i+7 <= len(body); i++ {
		if string(body[i:i+7]) == "<Error>" {
			return true
		}
	}
	return false
}

// deleteForRename deletes a rename's source. known is false when the
// outcome is unknown.
func (b *Backend) deleteForRename(ctx context.Context, bucket, key string) (known bool, err error) {
	resp, err := b.send(b.newRequest(ctx, http.MethodDelete, bucket, escapeKey(key), "", nil))
	if err != nil {
		return false, backendError(err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusNotFound:
		return true, nil
	case resp.StatusCode >= 500:
		return false, s3err.Newf(s3err.BadGateway, "The backend answered the rename's delete with status %d.", resp.StatusCode)
	}
	return true, s3err.Newf(s3err.BadGateway, "The backend answered the rename's delete with status %d.", resp.StatusCode)
}

package proxy

import (
	"github.com/s3cond/s3cond/internal/s3xml"
	"github.com/s3cond/s3cond/s3err"
)

// A backend with RefuseConditionalDeletes (backend.refuse_conditional_deletes)
// answers every conditional delete 501, as S3 answers what it does not
// implement, instead of serving it: its store's conditional delete is not
// atomic with its writes (versitygw v1.8.0 checks If-Match and removes the
// file outside the lock its PutObject holds), and without leases nothing
// else could make it so (docs/spec.md, "Lease-free plans"). Nothing of a
// refused request reaches the store.

// conditionalDeleteRefused is the answer to a refused conditional delete.
func conditionalDeleteRefused() error {
	return s3err.Newf(s3err.NotImplemented,
		"This endpoint does not serve conditional deletes (If-Match, x-amz-if-match-size, x-amz-if-match-last-modified-time, or a DeleteObjects entry with ETag, Size or LastModifiedTime): its store cannot make them atomic with its writes.")
}

// anyConditional reports whether any entry carries a condition (an ETag,
// a size or a time, parsed or not).
func anyConditional(objs []s3xml.ObjectIdentifier) bool {
	for _, o := range objs {
		if o.Conditional() {
			return true
		}
	}
	return false
}

package proxy

import (
	"net/http"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/s3xml"
	"github.com/s3cond/s3cond/precondition"
	"github.com/s3cond/s3cond/s3err"
)

// WritePolicy names the client buckets whose writes must carry more than
// S3 asks by default (config's require_conditional_writes,
// require_conditional_deletes and create_only). A nil function names no
// bucket.
type WritePolicy struct {
	// RequireConditionalWrites: a PutObject, CopyObject,
	// CompleteMultipartUpload or POST Object without If-None-Match or
	// If-Match is 403, as S3 answers under a bucket policy on
	// s3:if-none-match / s3:if-match. The multipart steps before the
	// completion take no condition on S3, so they are exempt there and here.
	RequireConditionalWrites func(bucket string) bool
	// RequireConditionalDeletes: a DeleteObject without If-Match, or a
	// DeleteObjects entry without an ETag, is 403 (S3's s3:if-match).
	RequireConditionalDeletes func(bucket string) bool
	// CreateOnly: an unconditional write is taken as If-None-Match: *, so a
	// tool that cannot send the header never overwrites. A write that sends
	// If-Match is an explicit compare-and-swap and goes on as sent.
	CreateOnly func(bucket string) bool
}

// withDefaults makes every unset rule name no bucket.
func (w WritePolicy) withDefaults() WritePolicy {
	none := func(string) bool { return false }
	for _, rule := range []*func(string) bool{&w.RequireConditionalWrites, &w.RequireConditionalDeletes, &w.CreateOnly} {
		if *rule == nil {
			*rule = none
		}
	}
	return w
}

// conditionalWriteRequired is S3's answer to an unconditional write under an
// enforcing bucket policy (403 AccessDenied); the message says what the
// bucket wants, since the client cannot read the configuration.
func conditionalWriteRequired() error {
	return s3err.Newf(s3err.AccessDenied, "Access Denied: this bucket takes only conditional writes (If-None-Match: * or If-Match).")
}

// conditionalDeleteRequired is the same for a delete without If-Match.
func conditionalDeleteRequired() error {
	return s3err.Newf(s3err.AccessDenied, "Access Denied: this bucket takes only conditional deletes (If-Match).")
}

// policyConditions applies c's bucket's write policy to the conditions c
// sent (own). It returns the conditions to enforce and whether s3cond added
// them itself (create_only), or the 403 of a policy the call does not meet.
// c's request is never changed: an added condition travels in the
// conditions, and to a store that checks it in the Guard's StoreCondition.
func (p *Proxy) policyConditions(c *call, own precondition.Conditions) (precondition.Conditions, bool, error) {
	bucket := c.target.Bucket
	if c.op == operation.DeleteObject {
		if !own.HasIfMatch() && p.writePolicy.RequireConditionalDeletes(bucket) {
			return own, false, conditionalDeleteRequired()
		}
		return own, false, nil
	}
	switch {
	case own.Active():
		return own, false, nil
	case p.writePolicy.RequireConditionalWrites(bucket):
		return own, false, conditionalWriteRequired()
	case p.writePolicy.CreateOnly(bucket):
		return precondition.Create(), true, nil
	}
	return own, false, nil
}

// nativeSpec is the spec of a write the store checks itself: the client's
// body, and the If-None-Match: * create_only added, which the client did not
// send and so is not among its forwarded headers.
func (p *Proxy) nativeSpec(c *call, added bool) forwardSpec {
	spec := p.clientBody(c)
	if added {
		spec.guard.StoreCondition = http.Header{precondition.HeaderIfNoneMatch: {"*"}}
	}
	return spec
}

// deleteEntryPolicy is the error of a DeleteObjects entry its bucket's
// policy refuses (no ETag where conditional deletes are required), or nil.
// S3 decides a DeleteObjects' permissions per key, answering each denied key
// AccessDenied in the result while the others go on; so does s3cond.
func (p *Proxy) deleteEntryPolicy(c *call, o s3xml.ObjectIdentifier) error {
	if p.writePolicy.RequireConditionalDeletes(c.target.Bucket) && !precondition.ForETag(o.ETag).HasIfMatch() {
		return conditionalDeleteRequired()
	}
	return nil
}

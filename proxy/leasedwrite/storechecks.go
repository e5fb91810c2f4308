package leasedwrite

import (
	"net/http"
	"sort"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/precondition"
)

// StoreChecks names the write conditions a store evaluates right itself,
// one request at a time (the start-up probe's native or racy verdicts), for
// a store s3cond still leases for: one that gets some conditional writes
// wrong. A leased write whose condition the store checks is sent with it,
// rebuilt from the checked condition, so a write that lands late (its
// s3cond paused or killed past its lease, a contender's write committed
// meanwhile) fails at the store instead of overwriting. The lease still
// decides; the store's check only adds a refusal where the object changed
// since s3cond's own check, which is a 412 S3 could have answered.
type StoreChecks struct {
	// IfNoneMatch: If-None-Match: * per operation.
	IfNoneMatch map[operation.Operation]bool
	// IfMatch: If-Match with one ETag per operation (If-Match: * is left
	// out: some stores read it as a literal ETag).
	IfMatch map[operation.Operation]bool
}

// storeCondition is the condition header to send the store with req's
// leased write, or nil when the store is not trusted with it.
func storeCondition(req Request, cond Condition) http.Header {
	conds, ok := cond.(precondition.Conditions)
	if !ok {
		return nil // strict mode's unconditional writes: nothing to forward
	}
	checks := req.Mode.Checks
	switch etags := conds.ETags(); {
	case conds.IsCreate() && checks.IfNoneMatch[req.Op]:
		return http.Header{precondition.HeaderIfNoneMatch: {"*"}}
	case len(etags) == 1 && checks.IfMatch[req.Op]:
		return http.Header{precondition.HeaderIfMatch: {etags[0]}}
	}
	return nil
}

// Names lists the checks, as "PutObject If-None-Match", sorted, for logs.
func (s StoreChecks) Names() []string {
	var names []string
	for op, on := range s.IfNoneMatch {
		if on {
			names = append(names, op.String()+" If-None-Match")
		}
	}
	for op, on := range s.IfMatch {
		if on {
			names = append(names, op.String()+" If-Match")
		}
	}
	sort.Strings(names)
	return names
}

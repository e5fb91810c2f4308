package leasedwrite

import (
	"sort"

	"github.com/s3cond/s3cond/internal/operation"
)

// Rule is how a lease-free (Native) mode makes one operation's conditions
// atomic: each rule relies on one check the store makes atomically itself
// (docs/spec.md, "Lease-free plans"). The zero Rule is RuleNative.
type Rule int

const (
	// RuleNative: the conditions go to the store as the client sent them;
	// the store evaluates every one of them atomically with the write.
	RuleNative Rule = iota
	// RuleIfMatch: s3cond evaluates the conditions on a HEAD and sends the
	// write with If-Match: <the ETag read>; the store's atomic ETag check
	// then refuses the write if the object changed since, so the whole is
	// atomic. An outcome that writes nothing is answered from the HEAD.
	// (DeleteObject on a store that ignores x-amz-if-match-size and
	// -last-modified-time: SeaweedFS 4.53.)
	RuleIfMatch
	// RuleUnquoted: the conditions go to the store with If-Match's ETags
	// unquoted (PutObject on Ceph RGW 16.2.15, which never matches a quoted
	// one).
	RuleUnquoted
	// RuleEntriesAsDeletes: a DeleteObjects' conditional entries are sent
	// one DeleteObject each, under DeleteObject's rule; its unconditional
	// ones in one DeleteObjects (a store that ignores entry ETags:
	// versitygw v1.8.0).
	RuleEntriesAsDeletes
	// RuleEmulated: a CopyObject with destination conditions is built from
	// the store's conditional PutObject or CompleteMultipartUpload, whose
	// atomic check makes it atomic (Mode.EmulateCopy; proxy/emulatedcopy.go;
	// backend.copy_emulation, as the ETag of a large copy is a multipart
	// one).
	RuleEmulated
	// RuleRefused: the operation's conditional form is answered 501
	// NotImplemented and never sent (DeleteObject and DeleteObjects under
	// backend.refuse_conditional_deletes, for a store whose conditional
	// delete is not atomic with its writes: versitygw v1.8.0). It relies on
	// nothing the store does.
	RuleRefused
)

// String names the rule as logs and docs do.
func (r Rule) String() string {
	switch r {
	case RuleIfMatch:
		return "reduced to If-Match"
	case RuleUnquoted:
		return "If-Match unquoted"
	case RuleEntriesAsDeletes:
		return "entries as DeleteObject"
	case RuleEmulated:
		return "emulated by a conditional PutObject or Complete"
	case RuleRefused:
		return "refused (501)"
	}
	return "native"
}

// Rules are a lease-free mode's rule per conditional operation; an
// operation not named is RuleNative. Chosen once per backend by
// internal/app and never changed in place: a mode is replaced whole.
type Rules map[operation.Operation]Rule

// Rule is op's rule in this mode (RuleNative when the mode names none).
func (m Mode) Rule(op operation.Operation) Rule { return m.Rules[op] }

// Names lists the rules other than native, as "DeleteObject: reduced to
// If-Match", sorted, for logs.
func (r Rules) Names() []string {
	var names []string
	for op, rule := range r {
		if rule != RuleNative {
			names = append(names, op.String()+": "+rule.String())
		}
	}
	sort.Strings(names)
	return names
}

package precondition

// AnyState is the condition of an unconditional write in strict mode
// (lease.serialize: all-writes). It holds whatever the object's state, but
// the write still leases the version it replaces ("*" when there is none),
// so it contends with every conditional writer of that version. It is also
// the lease rule of a DeleteObjects key whose entries carry different
// conditions: they all delete the version that is there.
type AnyState struct{}

// Evaluate always lets the write proceed: strict mode serialises writes,
// it does not refuse them.
func (AnyState) Evaluate(ObjectState) error { return nil }

// LeaseETag is the version the write replaces, in canonical form, or "*"
// when the object does not exist.
func (AnyState) LeaseETag(s ObjectState) string {
	if !s.Exists {
		return wildcard
	}
	return CanonicalETag(s.ETag)
}

// Covers reports whether a lease taken under leaseETag still names the
// version found in s: "*" covers only an absent object, an ETag only that
// same version.
func (AnyState) Covers(leaseETag string, s ObjectState) bool {
	if leaseETag == wildcard {
		return !s.Exists
	}
	return s.Exists && ETagsEqual(leaseETag, s.ETag)
}

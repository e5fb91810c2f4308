package app

import "github.com/s3cond/s3cond/internal/config"

// Strict mode (lease.serialize: all-writes) promises that an unconditional
// write never lands between a conditional write's check and its write
// (docs/spec.md §2). A backend served without leases forwards unconditional
// writes as they come, so only the store could keep that promise, and the
// probe races conditional writes against one another, never against an
// unconditional one (versitygw v1.8.0's unconditional DeleteObject takes
// no part in the lock its PutObject's check holds). So auto leases on a
// backend that may serve a strict bucket, whatever the probe found.

// strictModeWants is what the start-up log names as keeping such a
// backend leasing.
const strictModeWants = "strict mode (lease.serialize: all-writes)"

// servesStrictBucket reports whether strict mode may apply to a bucket
// backend b serves: everywhere under lease.serialize: all-writes; else
// where a lease.serialize_buckets entry says all-writes for one of b's
// buckets (any bucket for the default backend, which serves every bucket
// no backends[N] entry names).
func servesStrictBucket(l config.Lease, b config.Backend, isDefault bool) bool {
	if l.Serialize == config.SerializeAllWrites {
		return true
	}
	for bucket, mode := range l.SerializeBuckets {
		if mode != config.SerializeAllWrites {
			continue
		}
		if _, named := b.Buckets[bucket]; named || isDefault {
			return true
		}
	}
	return false
}

//go:build !s3cond_unsafe_trust_any_record

package dynamolease

const unsafeTrustAnyRecord = false

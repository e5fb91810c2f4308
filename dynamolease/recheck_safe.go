//go:build !s3cond_unsafe_trust_state_read

package dynamolease

// unsafeTrustStateRead is false in every real build: see recheck_unsafe.go.
const unsafeTrustStateRead = false

//go:build !s3cond_unsafe_plain_lease_wait

package dynamolease

// unsafePlainLeaseWait is false in every real build: see
// longestwait_unsafe.go.
const unsafePlainLeaseWait = false

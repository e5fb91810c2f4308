//go:build !s3cond_unsafe_generation_zero

package dynamolease

// unsafeGenerationZero is false in every real build: see
// generation_unsafe.go.
const unsafeGenerationZero = false

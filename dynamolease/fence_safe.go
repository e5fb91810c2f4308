//go:build !s3cond_unsafe_generation_only_takeover

package dynamolease

// unsafeGenerationOnlyTakeover is false in every real build: see
// fence_unsafe.go.
const unsafeGenerationOnlyTakeover = false

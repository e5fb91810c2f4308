//go:build !s3cond_unsafe_owner_without_token

package dynamolease

// unsafeOwnerWithoutToken is false in every real build: see
// ownertoken_unsafe.go.
const unsafeOwnerWithoutToken = false

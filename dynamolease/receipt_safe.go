//go:build !s3cond_unsafe_no_receipts

package dynamolease

const unsafeNoReceipts = false

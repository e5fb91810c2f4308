//go:build s3cond_unsafe_no_receipts

package dynamolease

// unsafeNoReceipts is a negative control for the linearizability suite
// (e2e/linearizability): no receipt is recorded nor read, so a conditional
// write whose answer was lost is answered 412 on its retry though it
// committed, and the suite must fail.
const unsafeNoReceipts = true

//go:build s3cond_unsafe_trust_state_read

package dynamolease

// unsafeTrustStateRead, only in a build with the tag
// s3cond_unsafe_trust_state_read, makes every Acquire trust the caller's
// state read: no re-check under the lease, nor before taking over a
// released row. It is the linearizability suite's negative control
// (e2e/linearizability, TestNegativeControlTrustingTheStateRead), which
// shows that the suite sees the difference the re-check makes. Never ship a
// build with it.
const unsafeTrustStateRead = true

//go:build s3cond_unsafe_owner_without_token

package dynamolease

// unsafeOwnerWithoutToken, only in a build with the tag
// s3cond_unsafe_owner_without_token, leaves the random token out of every
// owner, so the owner is host:pid/<attempt> as before issue 24: processes
// with one hostname and PID (containers) write the same owners. It is the
// linearizability suite's negative control for owner collisions
// (e2e/linearizability, TestNegativeControlOwnerWithoutToken). Never ship
// a build with it.
const unsafeOwnerWithoutToken = true

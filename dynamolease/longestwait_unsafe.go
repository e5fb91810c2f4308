//go:build s3cond_unsafe_plain_lease_wait

package dynamolease

// unsafePlainLeaseWait, only in a build with the tag
// s3cond_unsafe_plain_lease_wait, makes every wait that stands for rows
// nobody can read (the embedded store's pause after discarding its file,
// `s3cond leases recreate-table`) last timeout × skew, as before issue 33:
// a sized lease granted before the loss then outlives the wait. It is the
// linearizability suite's negative control (e2e/linearizability,
// TestNegativeControlPlainLeaseWait*). Never ship a build with it.
const unsafePlainLeaseWait = true

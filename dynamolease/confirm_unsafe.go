//go:build s3cond_unsafe_answer_unconfirmed

package dynamolease

// unsafeAnswerUnconfirmed, only in a build with the tag
// s3cond_unsafe_answer_unconfirmed, makes Lease.Confirm confirm nothing,
// as before issue 33: a holder whose sized lease was released (`s3cond
// leases release --force`) and taken over while the store did its write
// answers its client 200 beside the new holder's. It is the linearizability
// suite's negative control (e2e/linearizability,
// TestNegativeControlUnconfirmedHolderAnswers). Never ship a build with it.
const unsafeAnswerUnconfirmed = true

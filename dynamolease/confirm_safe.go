//go:build !s3cond_unsafe_answer_unconfirmed

package dynamolease

// unsafeAnswerUnconfirmed is false in every real build: see
// confirm_unsafe.go.
const unsafeAnswerUnconfirmed = false

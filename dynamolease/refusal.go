package dynamolease

import "errors"

// A lease store says why it cannot take a lease in the protocol's terms, so
// the proxy maps lease failures to S3 answers without knowing the stores:
// a *StoreError or ErrUnavailable (503: retry later), ErrUnsupported (501:
// retrying is pointless), ErrLeaseLost and ErrWaitBudgetExceeded (409).

// ErrUnavailable is what a store's Refusal wraps when the store cannot take
// leases now but may later (it is waiting out leases it may have lost).
var ErrUnavailable = errors.New("dynamolease: the lease store cannot take leases now")

// ErrUnsupported is what a store's Refusal wraps when the store can never
// hold this lease (an arrow-rs keyed DynamoDB table asked for another
// bucket's lease).
var ErrUnsupported = errors.New("dynamolease: the lease store cannot hold this lease")

// Refusal is a store's refusal of a lease write, with the sentence a client
// is told. A Committer passes it on inside a *StoreError.
type Refusal struct {
	Kind   error  // ErrUnavailable or ErrUnsupported
	Reason string // for the client's error answer: why, and whether to retry
	Err    error  // the store's own error, for the log; never nil
}

func (r *Refusal) Error() string { return r.Err.Error() }

// Unwrap makes the Refusal both its Kind and the store's own error.
func (r *Refusal) Unwrap() []error { return []error{r.Kind, r.Err} }

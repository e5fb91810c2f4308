package leasedwrite

import (
	"errors"
	"fmt"
	"testing"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/s3err"
)

// The lease store's failures reach the proxy as the protocol's errors, in a
// *StoreError as the Committer returns them, and leaseError alone turns them
// into S3 answers: a store's Refusal with its own sentence (501 for a lease
// it can never hold, 503 for one it cannot take now), any other store
// failure 503, a wait past the budget 409.
func TestLeaseErrorMapsTheProtocolErrors(t *testing.T) {
	cause := errors.New("the store's own words")
	cases := []struct {
		name    string
		err     error
		code    s3err.Code
		message string
	}{
		{"unsupported", &dynamolease.StoreError{Op: "create", Err: &dynamolease.Refusal{Kind: dynamolease.ErrUnsupported, Reason: "Never here.", Err: cause}},
			s3err.NotImplemented, "Never here."},
		{"unavailable for now", &dynamolease.StoreError{Op: "create", Err: &dynamolease.Refusal{Kind: dynamolease.ErrUnavailable, Reason: "Not yet.", Err: cause}},
			s3err.ServiceUnavailable, "Not yet."},
		{"store failure", &dynamolease.StoreError{Op: "get", Err: cause},
			s3err.ServiceUnavailable, "The lease store is unavailable; conditional writes are refused until it is back."},
		{"wait budget", fmt.Errorf("%w: waited", dynamolease.ErrWaitBudgetExceeded),
			s3err.ConditionalRequestConflict, s3err.New(s3err.ConditionalRequestConflict).Message},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got *s3err.Error
			if !errors.As(leaseError(tc.err), &got) {
				t.Fatalf("leaseError(%v) is no S3 error", tc.err)
			}
			if got.Code != tc.code || got.Message != tc.message {
				t.Fatalf("leaseError(%v) = %s %q; want %s %q", tc.err, got.Code, got.Message, tc.code, tc.message)
			}
			if !errors.Is(got, cause) && tc.name != "wait budget" {
				t.Fatalf("the answer lost the store's own error for the log: %v", got)
			}
		})
	}
}

package linearizability

import (
	"testing"

	"github.com/anishathalye/porcupine"
)

// The model's steps for the fault histories (hangup_test.go,
// deleteentries_test.go): copies and completes, and the entries of one
// DeleteObjects naming one key.

func TestModelAcceptsConditionalCopyAndComplete(t *testing.T) {
	h := []porcupine.Operation{
		op(0, 1, Input{Kind: OpCopy, Value: "src"}, Output{Outcome: OutcomeOK}),
		op(2, 3, Input{Kind: OpCopy, Value: "src"}, Output{Outcome: OutcomePreconditionFailed}),
		op(4, 5, Input{Kind: OpComplete, Expect: "src", Value: "m1"}, Output{Outcome: OutcomeOK}),
		op(6, 7, Input{Kind: OpCopy, Expect: "src", Value: "src"}, Output{Outcome: OutcomePreconditionFailed}),
		op(8, 9, Input{Kind: OpDelete, Expect: "m1"}, Output{Outcome: OutcomeOK}),
		op(10, 11, Input{Kind: OpComplete, Expect: "m1", Value: "m2"}, Output{Outcome: OutcomeNotFound}),
		op(12, 13, Input{Kind: OpComplete, Value: "m3"}, Output{Outcome: OutcomeOK}),
		op(14, 15, Input{Kind: OpGet}, Output{Outcome: OutcomeOK, Value: "m3"}),
	}
	if !porcupine.CheckOperations(RegisterModel, h) {
		t.Fatal("a sequential, correct history of copies and completes was rejected")
	}
}

// The history of issue 14, item 1: a copy whose client hung up (ambiguous)
// lands after a create that was acknowledged on the absent key.
func TestModelRejectsAbandonedCopyOverwritingAnAcknowledgedCreate(t *testing.T) {
	h := []porcupine.Operation{
		op(0, forever, Input{Kind: OpCopy, Value: "src"}, Output{Outcome: OutcomeAmbiguous}),
		op(1, 2, Input{Kind: OpCreate, Value: "second"}, Output{Outcome: OutcomeOK}),
		op(3, 4, Input{Kind: OpGet}, Output{Outcome: OutcomeOK, Value: "src"}),
	}
	if porcupine.CheckOperations(RegisterModel, h) {
		t.Fatal("an abandoned copy overwriting an acknowledged create was accepted")
	}
	// Either order is fine as long as the reads agree.
	h[2] = op(3, 4, Input{Kind: OpGet}, Output{Outcome: OutcomeOK, Value: "second"})
	if !porcupine.CheckOperations(RegisterModel, h) {
		t.Fatal("an abandoned copy that never applied was rejected")
	}
}

func TestModelJudgesDeleteEntriesOnOneState(t *testing.T) {
	entries := func(outcome Outcome, outcomes ...Outcome) Output {
		return Output{Outcome: outcome, Entries: outcomes}
	}
	base := []porcupine.Operation{op(0, 1, Input{Kind: OpCreate, Value: "a"}, Output{Outcome: OutcomeOK})}
	cases := []struct {
		name string
		in   Input
		out  Output
		ok   bool
	}{
		{"repeats all deleted, the stale one 412", Input{Kind: OpDeleteEntries, Entries: []string{"a", "old", "a"}},
			entries(OutcomeOK, OutcomePreconditionFailed, OutcomeOK, OutcomeOK), true},
		{"all 409", Input{Kind: OpDeleteEntries, Entries: []string{"a", "a"}},
			entries(OutcomeConflict, OutcomeConflict, OutcomeConflict), true},
		{"a repeat answered 409 beside its deleted twin", Input{Kind: OpDeleteEntries, Entries: []string{"a", "a"}},
			entries(OutcomeOK, OutcomeOK, OutcomeConflict), false},
		{"a matching entry answered 412", Input{Kind: OpDeleteEntries, Entries: []string{"a", "old"}},
			entries(OutcomePreconditionFailed, OutcomePreconditionFailed, OutcomePreconditionFailed), false},
		{"an answer missing", Input{Kind: OpDeleteEntries, Entries: []string{"a", "a"}},
			entries(OutcomeOK, OutcomeOK), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := append(append([]porcupine.Operation(nil), base...), op(2, 3, tc.in, tc.out))
			if got := porcupine.CheckOperations(RegisterModel, h); got != tc.ok {
				t.Fatalf("accepted = %v, want %v", got, tc.ok)
			}
		})
	}
}

// The history of issue 14, item 2: a DeleteObjects conditioned on v1 whose
// lease expired deletes the key after a CAS v1 → v2 was acknowledged.
func TestModelRejectsDeleteEntriesErasingAnAcknowledgedCAS(t *testing.T) {
	h := []porcupine.Operation{
		op(0, 1, Input{Kind: OpCreate, Value: "v1"}, Output{Outcome: OutcomeOK}),
		op(2, 10, Input{Kind: OpDeleteEntries, Entries: []string{"v1"}}, Output{Outcome: OutcomeOK, Entries: []Outcome{OutcomeOK}}),
		op(3, 4, Input{Kind: OpCAS, Expect: "v1", Value: "v2"}, Output{Outcome: OutcomeOK}),
		op(11, 12, Input{Kind: OpGet}, Output{Outcome: OutcomeNotFound}),
	}
	if porcupine.CheckOperations(RegisterModel, h) {
		t.Fatal("a delete of v1 erasing an acknowledged v2 was accepted")
	}
	// An unknown outcome may still have deleted v1 before the CAS: then the
	// CAS must have failed, so with it acknowledged the history stays illegal.
	h[1] = op(2, forever, Input{Kind: OpDeleteEntries, Entries: []string{"v1"}}, Output{Outcome: OutcomeAmbiguous})
	if porcupine.CheckOperations(RegisterModel, h) {
		t.Fatal("an ambiguous delete of v1 erasing an acknowledged v2 was accepted")
	}
}

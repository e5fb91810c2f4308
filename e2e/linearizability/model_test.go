package linearizability

import (
	"testing"

	"github.com/anishathalye/porcupine"
)

// op builds a porcupine operation on key "k" for the model tests.
func op(call, ret int64, in Input, out Output) porcupine.Operation {
	in.Key = "k"
	return porcupine.Operation{Input: in, Output: out, Call: call, Return: ret}
}

const forever = 1 << 40 // the "end of history" an ambiguous operation returns at

func TestModelAcceptsSequentialHistory(t *testing.T) {
	h := []porcupine.Operation{
		op(0, 1, Input{Kind: OpGet}, Output{Outcome: OutcomeNotFound}),
		op(2, 3, Input{Kind: OpCreate, Value: "a"}, Output{Outcome: OutcomeOK}),
		op(4, 5, Input{Kind: OpCreate, Value: "b"}, Output{Outcome: OutcomePreconditionFailed}),
		op(6, 7, Input{Kind: OpCAS, Expect: "a", Value: "c"}, Output{Outcome: OutcomeOK}),
		op(8, 9, Input{Kind: OpCAS, Expect: "a", Value: "d"}, Output{Outcome: OutcomePreconditionFailed}),
		op(10, 11, Input{Kind: OpGet}, Output{Outcome: OutcomeOK, Value: "c"}),
		op(12, 13, Input{Kind: OpDelete, Expect: "c"}, Output{Outcome: OutcomeOK}),
		op(14, 15, Input{Kind: OpCAS, Expect: "c", Value: "e"}, Output{Outcome: OutcomeNotFound}),
		op(16, 17, Input{Kind: OpDelete, Expect: "c"}, Output{Outcome: OutcomeNotFound}),
		op(18, 19, Input{Kind: OpPut, Value: "f"}, Output{Outcome: OutcomeOK}),
		op(20, 21, Input{Kind: OpCreate, Value: "g"}, Output{Outcome: OutcomeConflict}),
		op(22, 23, Input{Kind: OpGet}, Output{Outcome: OutcomeOK, Value: "f"}),
	}
	if !porcupine.CheckOperations(RegisterModel, h) {
		t.Fatal("a sequential, correct history was rejected")
	}
}

func TestModelRejectsTwoWinningCreates(t *testing.T) {
	h := []porcupine.Operation{
		op(0, 10, Input{Kind: OpCreate, Value: "a"}, Output{Outcome: OutcomeOK}),
		op(1, 11, Input{Kind: OpCreate, Value: "b"}, Output{Outcome: OutcomeOK}),
	}
	if porcupine.CheckOperations(RegisterModel, h) {
		t.Fatal("two successful creates of one key were accepted")
	}
}

func TestModelRejectsTwoWinningCASFromOneValue(t *testing.T) {
	h := []porcupine.Operation{
		op(0, 1, Input{Kind: OpCreate, Value: "a"}, Output{Outcome: OutcomeOK}),
		op(2, 10, Input{Kind: OpCAS, Expect: "a", Value: "b"}, Output{Outcome: OutcomeOK}),
		op(3, 11, Input{Kind: OpCAS, Expect: "a", Value: "c"}, Output{Outcome: OutcomeOK}),
	}
	if porcupine.CheckOperations(RegisterModel, h) {
		t.Fatal("two successful CAS from the same value were accepted")
	}
}

func TestModelRejectsLostUpdateByUnconditionalPut(t *testing.T) {
	// The anomaly of conditional-only mode: a put lands between a CAS's
	// check and its write, and the CAS's value wins.
	h := []porcupine.Operation{
		op(0, 1, Input{Kind: OpCreate, Value: "a"}, Output{Outcome: OutcomeOK}),
		op(2, 10, Input{Kind: OpCAS, Expect: "a", Value: "b"}, Output{Outcome: OutcomeOK}),
		op(3, 4, Input{Kind: OpPut, Value: "c"}, Output{Outcome: OutcomeOK}),
		op(11, 12, Input{Kind: OpGet}, Output{Outcome: OutcomeOK, Value: "b"}),
	}
	if porcupine.CheckOperations(RegisterModel, h) {
		t.Fatal("a lost update was accepted")
	}
}

func TestModelAmbiguousWriteMayOrMayNotHappen(t *testing.T) {
	took := []porcupine.Operation{
		op(0, forever, Input{Kind: OpCreate, Value: "a"}, Output{Outcome: OutcomeAmbiguous}),
		op(5, 6, Input{Kind: OpGet}, Output{Outcome: OutcomeOK, Value: "a"}),
	}
	if !porcupine.CheckOperations(RegisterModel, took) {
		t.Fatal("an ambiguous create that took effect was rejected")
	}
	didNot := []porcupine.Operation{
		op(0, forever, Input{Kind: OpCreate, Value: "a"}, Output{Outcome: OutcomeAmbiguous}),
		op(5, 6, Input{Kind: OpCreate, Value: "b"}, Output{Outcome: OutcomeOK}),
		op(7, 8, Input{Kind: OpGet}, Output{Outcome: OutcomeOK, Value: "b"}),
	}
	if !porcupine.CheckOperations(RegisterModel, didNot) {
		t.Fatal("an ambiguous create that never happened was rejected")
	}
	// Even an ambiguous CAS cannot apply when its expectation never held.
	impossible := []porcupine.Operation{
		op(0, 1, Input{Kind: OpCreate, Value: "a"}, Output{Outcome: OutcomeOK}),
		op(2, forever, Input{Kind: OpCAS, Expect: "x", Value: "b"}, Output{Outcome: OutcomeAmbiguous}),
		op(5, 6, Input{Kind: OpGet}, Output{Outcome: OutcomeOK, Value: "b"}),
	}
	if porcupine.CheckOperations(RegisterModel, impossible) {
		t.Fatal("an ambiguous CAS whose expectation never held was applied")
	}
}

// A write s3cond refused for an unreachable lease store must have had no
// effect, ever: the checker holds s3cond to its answer.
func TestModelRefusedWriteNeverHappens(t *testing.T) {
	didNot := []porcupine.Operation{
		op(0, 1, Input{Kind: OpCreate, Value: "a"}, Output{Outcome: OutcomeRefused}),
		op(2, 3, Input{Kind: OpGet}, Output{Outcome: OutcomeNotFound}),
	}
	if !porcupine.CheckOperations(RegisterModel, didNot) {
		t.Fatal("a refused create that never happened was rejected")
	}
	tookEffect := []porcupine.Operation{
		op(0, 1, Input{Kind: OpCreate, Value: "a"}, Output{Outcome: OutcomeRefused}),
		op(2, 3, Input{Kind: OpGet}, Output{Outcome: OutcomeOK, Value: "a"}),
	}
	if porcupine.CheckOperations(RegisterModel, tookEffect) {
		t.Fatal("a refused create that stored its value was accepted")
	}
}

func TestRecorderLeavesUnreturnedOperationsOpen(t *testing.T) {
	r := NewRecorder()
	r.Invoke(0, Input{Kind: OpCreate, Key: "k", Value: "a"}) // never returns: ambiguous
	r.Invoke(1, Input{Kind: OpGet, Key: "k"}).Return(Output{Outcome: OutcomeOK, Value: "a"})
	ops := r.Operations()
	if ops[0].Output.(Output).Outcome != OutcomeAmbiguous || ops[0].Return <= ops[1].Return {
		t.Fatalf("an unreturned operation must be ambiguous and end last: %+v", ops[0])
	}
	if res := Check(t, r); res != porcupine.Ok {
		t.Fatalf("check: %s", res)
	}
	if s := r.Stats(); s.Ops != 2 || s.ByResult[OutcomeAmbiguous] != 1 {
		t.Fatalf("stats: %s", s)
	}
}

package linearizability

import (
	"fmt"
	"slices"
	"sort"

	"github.com/anishathalye/porcupine"
)

// OpKind is what one recorded operation did.
type OpKind int

const (
	// OpGet is GetObject: the body, or not found.
	OpGet OpKind = iota
	// OpCreate is PutObject with If-None-Match: *.
	OpCreate
	// OpCAS is PutObject with If-Match: the ETag of Expect.
	OpCAS
	// OpDelete is DeleteObject with If-Match: the ETag of Expect.
	OpDelete
	// OpPut is an unconditional PutObject.
	OpPut
	// OpCopy is CopyObject of a source whose value is Value, with
	// If-None-Match: * when Expect is empty, else If-Match: Expect's ETag.
	OpCopy
	// OpComplete is CompleteMultipartUpload of an upload whose object holds
	// Value, conditional like OpCopy.
	OpComplete
	// OpDeleteEntries is every entry of one DeleteObjects request that
	// names Key: Entries are the values whose ETags the entries sent, and
	// Output.Entries their answers. s3cond deletes the key once for all of
	// them, so they are one operation, judged on one state.
	OpDeleteEntries
)

func (k OpKind) String() string {
	switch k {
	case OpGet:
		return "get"
	case OpCreate:
		return "create"
	case OpCAS:
		return "cas"
	case OpDelete:
		return "delete"
	case OpPut:
		return "put"
	case OpCopy:
		return "copy"
	case OpComplete:
		return "complete"
	case OpDeleteEntries:
		return "delete-entries"
	}
	return fmt.Sprintf("op(%d)", int(k))
}

// Outcome is what the client learnt from the server.
type Outcome int

const (
	// OutcomeOK is a 2xx.
	OutcomeOK Outcome = iota
	// OutcomePreconditionFailed is 412: the object exists (create) or holds
	// another value (CAS, delete).
	OutcomePreconditionFailed
	// OutcomeNotFound is 404 NoSuchKey: GET, or If-Match on a missing object.
	OutcomeNotFound
	// OutcomeConflict is 409 ConditionalRequestConflict: nothing happened,
	// another conditional write held the key for the whole wait budget.
	OutcomeConflict
	// OutcomeAmbiguous is a timeout, a 5xx or a broken connection: the write
	// may or may not have happened, now or later.
	OutcomeAmbiguous
	// OutcomeRefused is s3cond's 503 ServiceUnavailable for a lease store
	// it cannot reach: the write was refused before anything reached the
	// backend (docs/operations.md). The checker holds s3cond to that: such
	// a write must have had no effect.
	OutcomeRefused
)

func (o Outcome) String() string {
	return [...]string{"ok", "412", "404", "409", "?", "503"}[o]
}

// Input is an operation as the client invoked it. Values are unique per
// write and never empty, so a value names the write that stored it.
type Input struct {
	Kind   OpKind
	Key    string
	Value  string // what create, CAS and put store
	Expect string // the value whose ETag CAS and delete sent in If-Match
	// Entries are the values whose ETags an OpDeleteEntries' entries sent.
	Entries []string
}

// Output is what the client got back.
type Output struct {
	Outcome Outcome
	Value   string // the value GET read
	// Entries are the answers to an OpDeleteEntries' entries, in any
	// order (Outcome is OK if any entry was deleted).
	Entries []Outcome
}

// absent is the model's state of a key with no object.
const absent = ""

// RegisterModel is a per-key register with create, compare-and-swap,
// conditional delete, unconditional put and read; the state of one
// partition is the key's value, absent when empty.
//
// An ambiguous write is stepped as "applies if its condition holds at its
// linearization point": the recorder leaves it open until the end of the
// history, so the checker may also place it after everything else, which is
// the same as it never having happened.
var RegisterModel = porcupine.Model{
	Partition: partitionByKey,
	Init:      func() interface{} { return absent },
	Step:      step,
	DescribeOperation: func(in, out interface{}) string {
		i, o := in.(Input), out.(Output)
		switch i.Kind {
		case OpGet:
			return fmt.Sprintf("get(%s) → %s %q", i.Key, o.Outcome, o.Value)
		case OpCreate, OpPut:
			return fmt.Sprintf("%s(%s, %q) → %s", i.Kind, i.Key, i.Value, o.Outcome)
		case OpCAS:
			return fmt.Sprintf("cas(%s, %q → %q) → %s", i.Key, i.Expect, i.Value, o.Outcome)
		case OpCopy, OpComplete:
			return fmt.Sprintf("%s(%s, if %q → %q) → %s", i.Kind, i.Key, i.Expect, i.Value, o.Outcome)
		case OpDeleteEntries:
			return fmt.Sprintf("delete-entries(%s, if %q) → %s %v", i.Key, i.Entries, o.Outcome, o.Entries)
		default:
			return fmt.Sprintf("%s(%s, if %q) → %s", i.Kind, i.Key, i.Expect, o.Outcome)
		}
	},
	DescribeState: func(state interface{}) string {
		if state.(string) == absent {
			return "(absent)"
		}
		return fmt.Sprintf("%q", state)
	},
}

func step(stateAny, inAny, outAny interface{}) (bool, interface{}) {
	state, in, out := stateAny.(string), inAny.(Input), outAny.(Output)
	if in.Kind == OpDeleteEntries {
		return stepDeleteEntries(state, in, out)
	}
	// What the write does if it takes effect at this point.
	applies, next := false, state
	switch in.Kind {
	case OpGet:
		switch out.Outcome {
		case OutcomeOK:
			return state != absent && out.Value == state, state
		case OutcomeNotFound:
			return state == absent, state
		case OutcomeAmbiguous:
			return true, state
		}
		return false, state
	case OpCreate:
		applies, next = state == absent, in.Value
	case OpCAS:
		applies, next = state != absent && state == in.Expect, in.Value
	case OpDelete:
		applies, next = state != absent && state == in.Expect, absent
	case OpPut:
		applies, next = true, in.Value
	case OpCopy, OpComplete:
		if in.Expect == "" {
			applies = state == absent
		} else {
			applies = state != absent && state == in.Expect
		}
		next = in.Value
	}
	switch out.Outcome {
	case OutcomeOK:
		return applies, next
	case OutcomeAmbiguous:
		if applies {
			return true, next
		}
		return true, state
	case OutcomeConflict, OutcomeRefused:
		// Another write held the key for the whole wait budget, or the
		// lease store was out of reach: this one never reached the backend
		// (strict mode answers unconditional writes the same way).
		return true, state
	case OutcomePreconditionFailed:
		// Create: the object exists; If-Match: it exists with another value.
		return state != absent && !applies, state
	case OutcomeNotFound:
		return (in.Kind == OpCAS || in.Kind == OpDelete || (in.Kind == OpCopy || in.Kind == OpComplete) && in.Expect != "") &&
			state == absent, state
	}
	return false, state
}

// stepDeleteEntries judges the entries of one DeleteObjects request naming
// one key, all on the same state, as s3cond leases the key once for them:
// an entry whose ETag names the state is deleted, every other one gets 412
// (404 if the key is absent); all of them 409 (never sent) or, if the
// request's outcome is unknown, the delete happened if any entry held.
func stepDeleteEntries(state string, in Input, out Output) (bool, interface{}) {
	holds := false
	for _, expect := range in.Entries {
		holds = holds || state != absent && expect == state
	}
	switch out.Outcome {
	case OutcomeAmbiguous:
		if holds {
			return true, absent
		}
		return true, state
	case OutcomeConflict, OutcomeRefused:
		for _, o := range out.Entries {
			if o != out.Outcome {
				return false, state
			}
		}
		return true, state
	}
	// The answers name their key, not their ETag: compare them as a
	// multiset with what each entry must get on this state.
	want := make([]Outcome, len(in.Entries))
	for i, expect := range in.Entries {
		switch {
		case state == absent:
			want[i] = OutcomeNotFound
		case expect != state:
			want[i] = OutcomePreconditionFailed
		default:
			want[i] = OutcomeOK
		}
	}
	if !slices.Equal(sortedOutcomes(want), sortedOutcomes(out.Entries)) {
		return false, state
	}
	if holds {
		return true, absent
	}
	return true, state
}

func partitionByKey(history []porcupine.Operation) [][]porcupine.Operation {
	byKey := map[string][]porcupine.Operation{}
	for _, op := range history {
		key := op.Input.(Input).Key
		byKey[key] = append(byKey[key], op)
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([][]porcupine.Operation, 0, len(keys))
	for _, k := range keys {
		out = append(out, byKey[k])
	}
	return out
}

func sortedOutcomes(in []Outcome) []Outcome {
	out := slices.Clone(in)
	slices.Sort(out)
	return out
}

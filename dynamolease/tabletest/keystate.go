package tabletest

import (
	"errors"
	"testing"

	"github.com/s3cond/s3cond/dynamolease"
)

// Recorded key states (dynamolease/keystate.go): a released row carries
// the state its holder recorded, and every write of the row without one
// (an acquire, a renewal, a takeover) leaves none behind, so a record never
// outlives the release that wrote it.

// carriesKeyStates tells whether tbl's rows carry key states: a table
// whose rows cannot (arrow-rs keyed DynamoDB) refuses to create a row with
// one, and then must store none, whatever a release asks.
func carriesKeyStates(t *testing.T, tbl dynamolease.Table, path string) bool {
	t.Helper()
	probe := record(path+"/probe", "*", 1, "probe")
	probe.Released = true
	probe.KeyState = &dynamolease.KeyState{}
	_, err := tbl.Create(ctx(t), probe)
	switch {
	case errors.Is(err, dynamolease.ErrKeyStatesUnsupported):
		return false
	case err != nil:
		t.Fatalf("create a row with a key state: %v", err)
	}
	return true
}

// expected is want on a table whose rows carry key states, nil on another.
func expected(carries bool, want *dynamolease.KeyState) *dynamolease.KeyState {
	if !carries {
		return nil
	}
	return want
}

func sameKeyState(a, b *dynamolease.KeyState) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func assertKeyState(t *testing.T, what string, got *dynamolease.Record, want *dynamolease.KeyState) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: no row", what)
	}
	if !sameKeyState(got.KeyState, want) {
		t.Fatalf("%s: key state %+v, want %+v", what, got.KeyState, want)
	}
}

// testKeyStateWrittenByRelease: a release recording the key's ETag, then a
// takeover writing none, then a release recording absence, each read back.
func testKeyStateWrittenByRelease(t *testing.T, tbl dynamolease.Table, path string) {
	carries := carriesKeyStates(t, tbl, path)
	held := record(path, quotedETag, 7, "holder")
	if _, err := tbl.Create(ctx(t), held); err != nil {
		t.Fatal(err)
	}
	assertKeyState(t, "created row", mustGet(t, tbl, path, quotedETag), nil)

	released := held
	released.Released = true
	released.KeyState = &dynamolease.KeyState{Exists: true, ETag: quotedETag}
	if _, err := tbl.Replace(ctx(t), released, 7); err != nil {
		t.Fatalf("release recording the ETag: %v", err)
	}
	assertKeyState(t, "released row", mustGet(t, tbl, path, quotedETag), expected(carries, released.KeyState))

	takenOver := record(path, quotedETag, 8, "next")
	takenOver.Fence = dynamolease.FenceOf(mustGet(t, tbl, path, quotedETag))
	if _, err := tbl.Replace(ctx(t), takenOver, 7); err != nil {
		t.Fatalf("takeover: %v", err)
	}
	assertKeyState(t, "row taken over", mustGet(t, tbl, path, quotedETag), nil)

	deleted := takenOver
	deleted.Fence = nil
	deleted.Released = true
	deleted.KeyState = &dynamolease.KeyState{}
	if _, err := tbl.Replace(ctx(t), deleted, 8); err != nil {
		t.Fatalf("release recording absence: %v", err)
	}
	assertKeyState(t, "row released after a delete", mustGet(t, tbl, path, quotedETag), expected(carries, deleted.KeyState))
}

// testKeyStateOfCreatedRow: a birth (a row created released, vouching for
// its version) round-trips, and a renewal-style write clears it.
func testKeyStateOfCreatedRow(t *testing.T, tbl dynamolease.Table, path string) {
	if !carriesKeyStates(t, tbl, path) {
		if r := mustGet(t, tbl, path+"/probe", "*"); r != nil {
			t.Fatalf("a table refusing key states created the row %+v", *r)
		}
		return
	}
	born := record(path, "*", 3, "born")
	born.Released = true
	born.KeyState = &dynamolease.KeyState{}
	if _, err := tbl.Create(ctx(t), born); err != nil {
		t.Fatalf("create a row recording absence: %v", err)
	}
	assertKeyState(t, "created released row", mustGet(t, tbl, path, "*"), born.KeyState)
	plain := record(path, "*", 4, "born")
	if _, err := tbl.Replace(ctx(t), plain, 3); err != nil {
		t.Fatal(err)
	}
	assertKeyState(t, "row rewritten without a record", mustGet(t, tbl, path, "*"), nil)
}

// testCreateOrTakeVouched: a table with one-request takes (VouchedTaker)
// creates an absent row, takes a released row recording its own version
// whatever its generation, and refuses a held row, a released row
// recording another version, and one recording nothing.
func testCreateOrTakeVouched(t *testing.T, tbl dynamolease.Table, path string) {
	first := record(path, quotedETag, 11, "first")
	replaced, err := dynamolease.CreateOrTakeVouched(ctx(t), tbl, first)
	if errors.Is(err, dynamolease.ErrKeyStatesUnsupported) {
		return // the committer falls back to create and takeover
	}
	if err != nil || replaced != nil {
		t.Fatalf("create or take on an absent row = %v, %v; want nil, nil", replaced, err)
	}
	second := record(path, quotedETag, 99, "second")
	if _, err := dynamolease.CreateOrTakeVouched(ctx(t), tbl, second); !errors.Is(err, dynamolease.ErrConditionFailed) {
		t.Fatalf("take of a held row: %v; want ErrConditionFailed", err)
	}
	for _, ks := range []*dynamolease.KeyState{nil, {}, {Exists: true, ETag: `"other"`}} {
		released := first
		released.Released, released.KeyState = true, ks
		if _, err := tbl.Replace(ctx(t), released, 11); err != nil {
			t.Fatal(err)
		}
		if _, err := dynamolease.CreateOrTakeVouched(ctx(t), tbl, second); !errors.Is(err, dynamolease.ErrConditionFailed) {
			t.Fatalf("take of a released row recording %+v: %v; want ErrConditionFailed", ks, err)
		}
	}
	vouching := first
	vouching.Released, vouching.KeyState = true, &dynamolease.KeyState{Exists: true, ETag: quotedETag}
	if _, err := tbl.Replace(ctx(t), vouching, 11); err != nil {
		t.Fatal(err)
	}
	replaced, err = dynamolease.CreateOrTakeVouched(ctx(t), tbl, second)
	if err != nil {
		t.Fatalf("take of a row vouching for its version: %v", err)
	}
	assertRecord(t, "row replaced", replaced, vouching)
	assertKeyState(t, "row replaced", replaced, vouching.KeyState)
	assertRecord(t, "row after the take", mustGet(t, tbl, path, quotedETag), second)
}

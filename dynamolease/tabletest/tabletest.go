// Package tabletest is the one conformance suite every dynamolease.Table
// implementation must pass: each store's own package runs the same
// assertions against it (the in-memory table in dynamolease, the bbolt file
// in boltstore, DynamoDB as emulated by moto and dynalite in dynamostore,
// etcd in etcdstore), with the checks and benchmarks every store shares
// (HeldThenTakenOver, HotKey, DistinctKeys).
package tabletest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
)

// Run runs the suite. newTable returns a table to use for one subtest; it
// may be shared between subtests, since each uses its own paths.
func Run(t *testing.T, newTable func(t *testing.T) dynamolease.Table) {
	cases := []struct {
		name string
		run  func(t *testing.T, tbl dynamolease.Table, path string)
	}{
		{"GetAbsent", testGetAbsent},
		{"CreateThenGetRoundTrips", testCreateRoundTrip},
		{"CreateConflictReturnsExisting", testCreateConflict},
		{"SortKeySeparatesETags", testSortKey},
		{"ReplaceWithSeenGeneration", testReplaceRight},
		{"ReplaceWithWrongGenerationReturnsCurrent", testReplaceWrong},
		{"ReplaceAbsentRowFails", testReplaceAbsent},
		{"FencedTakeoverTakesOnlyTheRowItSaw", testFencedTakeover},
		{"ReleasedFlagRoundTrips", testReleased},
		{"RacingCreatesHaveOneWinner", testRacingCreates},
		{"RacingReplacesHaveOneWinner", testRacingReplaces},
		{"KeyStateWrittenByReleaseAndClearedByTakeover", testKeyStateWrittenByRelease},
		{"KeyStateOfCreatedRow", testKeyStateOfCreatedRow},
		{"CreateOrTakeVouched", testCreateOrTakeVouched},
		{"RenameNotes", testRenameNotes},
		{"ReceiptCarriedAcrossHolders", testReceiptCarriedAcrossHolders},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tbl := newTable(t)
			path := fmt.Sprintf("bucket/%s/%d", tc.name, time.Now().UnixNano())
			tc.run(t, tbl, path)
		})
	}
	runBatch(t, newTable)
}

// quotedETag is an ETag as S3 returns it, quotes included: the sort key
// must keep them.
const quotedETag = `"9b2cf535f27731c974343645a3985328"`

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

func record(path, etag string, generation uint64, owner string) dynamolease.Record {
	return dynamolease.Record{
		Path:       path,
		ETag:       etag,
		Generation: generation,
		Timeout:    1500 * time.Millisecond,
		TTL:        time.Unix(time.Now().Add(time.Hour).Unix(), 0),
		Owner:      owner,
	}
}

func mustGet(t *testing.T, tbl dynamolease.Table, path, etag string) *dynamolease.Record {
	t.Helper()
	r, err := tbl.Get(ctx(t), path, etag)
	if err != nil {
		t.Fatalf("Get(%q, %q): %v", path, etag, err)
	}
	return r
}

func assertRecord(t *testing.T, what string, got *dynamolease.Record, want dynamolease.Record) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: no row, want %+v", what, want)
	}
	if got.Path != want.Path || got.ETag != want.ETag || got.Generation != want.Generation ||
		got.Timeout != want.Timeout || !got.TTL.Equal(want.TTL) || got.Owner != want.Owner ||
		got.Released != want.Released {
		t.Fatalf("%s: got %+v, want %+v", what, *got, want)
	}
}

func testGetAbsent(t *testing.T, tbl dynamolease.Table, path string) {
	if r := mustGet(t, tbl, path, "*"); r != nil {
		t.Fatalf("Get on an empty key returned %+v, want nil", *r)
	}
}

func testCreateRoundTrip(t *testing.T, tbl dynamolease.Table, path string) {
	want := record(path, quotedETag, 0, "host:1:ab/1")
	if existing, err := tbl.Create(ctx(t), want); err != nil || existing != nil {
		t.Fatalf("Create = %v, %v; want nil, nil", existing, err)
	}
	assertRecord(t, "after Create", mustGet(t, tbl, path, quotedETag), want)
}

func testCreateConflict(t *testing.T, tbl dynamolease.Table, path string) {
	first := record(path, "*", 0, "first")
	if _, err := tbl.Create(ctx(t), first); err != nil {
		t.Fatalf("first Create: %v", err)
	}
	second := record(path, "*", 0, "second")
	existing, err := tbl.Create(ctx(t), second)
	if !errors.Is(err, dynamolease.ErrConditionFailed) {
		t.Fatalf("second Create error = %v, want ErrConditionFailed", err)
	}
	assertRecord(t, "row returned by the failed Create", existing, first)
	assertRecord(t, "row after the failed Create", mustGet(t, tbl, path, "*"), first)
}

func testSortKey(t *testing.T, tbl dynamolease.Table, path string) {
	star := record(path, "*", 0, "star")
	quoted := record(path, quotedETag, 0, "quoted")
	unquoted := record(path, quotedETag[1:len(quotedETag)-1], 0, "unquoted")
	for _, r := range []dynamolease.Record{star, quoted, unquoted} {
		if _, err := tbl.Create(ctx(t), r); err != nil {
			t.Fatalf("Create %q: %v", r.ETag, err)
		}
	}
	assertRecord(t, "star row", mustGet(t, tbl, path, "*"), star)
	assertRecord(t, "quoted row", mustGet(t, tbl, path, quotedETag), quoted)
	assertRecord(t, "unquoted row", mustGet(t, tbl, path, unquoted.ETag), unquoted)
	if r := mustGet(t, tbl, path+"x", "*"); r != nil {
		t.Fatalf("another path sees %+v", *r)
	}
}

func testReplaceRight(t *testing.T, tbl dynamolease.Table, path string) {
	if _, err := tbl.Create(ctx(t), record(path, "*", 0, "a")); err != nil {
		t.Fatal(err)
	}
	next := record(path, "*", 1, "b")
	next.Timeout = 20 * time.Second
	if current, err := tbl.Replace(ctx(t), next, 0); err != nil || current != nil {
		t.Fatalf("Replace(seen 0) = %v, %v; want nil, nil", current, err)
	}
	assertRecord(t, "after Replace", mustGet(t, tbl, path, "*"), next)
}

func testReplaceWrong(t *testing.T, tbl dynamolease.Table, path string) {
	held := record(path, quotedETag, 0, "a")
	if _, err := tbl.Create(ctx(t), held); err != nil {
		t.Fatal(err)
	}
	for _, seen := range []uint64{1, 7} {
		current, err := tbl.Replace(ctx(t), record(path, quotedETag, seen+1, "b"), seen)
		if !errors.Is(err, dynamolease.ErrConditionFailed) {
			t.Fatalf("Replace(seen %d) error = %v, want ErrConditionFailed", seen, err)
		}
		assertRecord(t, "row returned by the failed Replace", current, held)
	}
	assertRecord(t, "row after failed Replaces", mustGet(t, tbl, path, quotedETag), held)
}

func testReplaceAbsent(t *testing.T, tbl dynamolease.Table, path string) {
	current, err := tbl.Replace(ctx(t), record(path, "*", 1, "b"), 0)
	if !errors.Is(err, dynamolease.ErrConditionFailed) {
		t.Fatalf("Replace on an absent row: error = %v, want ErrConditionFailed", err)
	}
	if current != nil {
		t.Fatalf("Replace on an absent row returned %+v, want nil", *current)
	}
	if r := mustGet(t, tbl, path, "*"); r != nil {
		t.Fatalf("Replace on an absent row created %+v", *r)
	}
}

func testReleased(t *testing.T, tbl dynamolease.Table, path string) {
	held := record(path, "*", 0, "a")
	if _, err := tbl.Create(ctx(t), held); err != nil {
		t.Fatal(err)
	}
	released := held
	released.Released = true
	if _, err := tbl.Replace(ctx(t), released, 0); err != nil {
		t.Fatalf("mark released: %v", err)
	}
	assertRecord(t, "released row", mustGet(t, tbl, path, "*"), released)
	// A failed Create shows the flag too: that is how a contender learns
	// it may take over at once.
	existing, err := tbl.Create(ctx(t), record(path, "*", 0, "b"))
	if !errors.Is(err, dynamolease.ErrConditionFailed) {
		t.Fatalf("Create over a released row: error = %v, want ErrConditionFailed", err)
	}
	assertRecord(t, "row returned by Create over a released row", existing, released)
	takeover := record(path, "*", 1, "b")
	if _, err := tbl.Replace(ctx(t), takeover, 0); err != nil {
		t.Fatalf("take over released row: %v", err)
	}
	assertRecord(t, "taken-over row", mustGet(t, tbl, path, "*"), takeover)
}

// race runs n calls of attempt at once and returns how many succeeded; every
// failure must be ErrConditionFailed.
func race(t *testing.T, n int, attempt func(i int) (*dynamolease.Record, error)) (winners []int) {
	t.Helper()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		start   = make(chan struct{})
		badErrs atomic.Int32
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			existing, err := attempt(i)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				winners = append(winners, i)
			case errors.Is(err, dynamolease.ErrConditionFailed):
				_ = existing
			default:
				badErrs.Add(1)
				t.Errorf("attempt %d: %v", i, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if badErrs.Load() > 0 {
		t.FailNow()
	}
	return winners
}

func testRacingCreates(t *testing.T, tbl dynamolease.Table, path string) {
	c := ctx(t)
	winners := race(t, 32, func(i int) (*dynamolease.Record, error) {
		existing, err := tbl.Create(c, record(path, "*", 0, fmt.Sprintf("owner-%d", i)))
		if err != nil && existing != nil && existing.Generation != 0 {
			t.Errorf("loser %d saw generation %d", i, existing.Generation)
		}
		return existing, err
	})
	if len(winners) != 1 {
		t.Fatalf("%d of 32 racing Creates won (%v), want exactly 1", len(winners), winners)
	}
	if got := mustGet(t, tbl, path, "*"); got == nil || got.Owner != fmt.Sprintf("owner-%d", winners[0]) {
		t.Fatalf("row after the race = %+v, want the winner owner-%d", got, winners[0])
	}
}

func testRacingReplaces(t *testing.T, tbl dynamolease.Table, path string) {
	if _, err := tbl.Create(ctx(t), record(path, quotedETag, 4, "holder")); err != nil {
		t.Fatal(err)
	}
	c := ctx(t)
	winners := race(t, 16, func(i int) (*dynamolease.Record, error) {
		return tbl.Replace(c, record(path, quotedETag, 5, fmt.Sprintf("taker-%d", i)), 4)
	})
	if len(winners) != 1 {
		t.Fatalf("%d of 16 racing Replaces won (%v), want exactly 1", len(winners), winners)
	}
	got := mustGet(t, tbl, path, quotedETag)
	if got == nil || got.Generation != 5 || got.Owner != fmt.Sprintf("taker-%d", winners[0]) {
		t.Fatalf("row after the race = %+v, want generation 5 owned by taker-%d", got, winners[0])
	}
}

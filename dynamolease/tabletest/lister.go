package tabletest

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
)

// ListerTable is a Table that operators can list.
type ListerTable interface {
	dynamolease.Table
	dynamolease.Lister
}

// RunLister runs the suite of what `s3cond leases` relies on: List and
// dynamolease.ReleaseRow. newTable may share one table between subtests;
// each lists only the prefix of its own paths.
func RunLister(t *testing.T, newTable func(t *testing.T) ListerTable) {
	cases := []struct {
		name string
		run  func(t *testing.T, tbl ListerTable, prefix string)
	}{
		{"ListReturnsRowsUnderPrefixSorted", testListPrefix},
		{"ListEmptyPrefixSeesEveryRow", testListAll},
		{"ReleaseRowAtItsGeneration", testReleaseRow},
		{"ReleaseRowRefusesARenewedLease", testReleaseRenewed},
		{"ReleaseRowOfAbsentRow", testReleaseAbsent},
		{"ReleasedRowIsTakenOverAtOnce", testReleaseTakeover},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tbl := newTable(t)
			prefix := fmt.Sprintf("bucket/%s/%d/", tc.name, time.Now().UnixNano())
			tc.run(t, tbl, prefix)
		})
	}
}

func mustList(t *testing.T, tbl ListerTable, prefix string) []dynamolease.Record {
	t.Helper()
	rows, err := tbl.List(ctx(t), prefix)
	if err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	return rows
}

func testListPrefix(t *testing.T, tbl ListerTable, prefix string) {
	// Created out of order; a path with "/" and one with a space and a
	// quote exercise every table's key encoding.
	// Sorted by etag in byte order: '"' comes before '*'.
	want := []dynamolease.Record{
		record(prefix+"a b/c", quotedETag, 0, "two"),
		record(prefix+"a b/c", "*", 2, "one"),
		record(prefix+"z", "*", 7, "three"),
	}
	want[0].Released = true
	for _, i := range []int{2, 0, 1} {
		if _, err := tbl.Create(ctx(t), want[i]); err != nil {
			t.Fatalf("Create %q %q: %v", want[i].Path, want[i].ETag, err)
		}
	}
	// Beside the prefix, not under it.
	if _, err := tbl.Create(ctx(t), record(prefix[:len(prefix)-1]+"x/a", "*", 0, "other")); err != nil {
		t.Fatal(err)
	}
	got := mustList(t, tbl, prefix)
	if len(got) != len(want) {
		t.Fatalf("List(%q) = %d rows %+v, want %d", prefix, len(got), got, len(want))
	}
	for i := range want {
		assertRecord(t, fmt.Sprintf("row %d", i), &got[i], want[i])
	}
	if only := mustList(t, tbl, prefix+"z"); len(only) != 1 || only[0].Owner != "three" {
		t.Fatalf("List(%q) = %+v, want only the row owned by three", prefix+"z", only)
	}
	if none := mustList(t, tbl, prefix+"nothing"); len(none) != 0 {
		t.Fatalf("List of a prefix with no rows = %+v", none)
	}
}

func testListAll(t *testing.T, tbl ListerTable, prefix string) {
	mine := record(prefix+"k", "*", 0, "mine")
	if _, err := tbl.Create(ctx(t), mine); err != nil {
		t.Fatal(err)
	}
	for _, r := range mustList(t, tbl, "") {
		if r.Path == mine.Path && r.ETag == mine.ETag {
			assertRecord(t, "row in the whole listing", &r, mine)
			return
		}
	}
	t.Fatalf("List(\"\") does not show %q", mine.Path)
}

func testReleaseRow(t *testing.T, tbl ListerTable, prefix string) {
	held := record(prefix+"k", quotedETag, 3, "dead-holder")
	if _, err := tbl.Create(ctx(t), held); err != nil {
		t.Fatal(err)
	}
	got, err := dynamolease.ReleaseRow(ctx(t), tbl, held.Path, held.ETag, 3)
	if err != nil {
		t.Fatalf("ReleaseRow at generation 3: %v", err)
	}
	want := held
	want.Generation, want.Released = 4, true
	assertRecord(t, "ReleaseRow's answer", got, want)
	assertRecord(t, "row after ReleaseRow", mustGet(t, tbl, held.Path, held.ETag), want)
	// The dead holder's renewal, had it been alive, now fails.
	if _, err := tbl.Replace(ctx(t), record(held.Path, held.ETag, 4, "dead-holder"), 3); !errors.Is(err, dynamolease.ErrConditionFailed) {
		t.Fatalf("the holder's renewal after ReleaseRow: %v, want ErrConditionFailed", err)
	}
	// Releasing again is a no-op that reports the row.
	again, err := dynamolease.ReleaseRow(ctx(t), tbl, held.Path, held.ETag, 4)
	if err != nil {
		t.Fatalf("ReleaseRow of a released row: %v", err)
	}
	assertRecord(t, "second ReleaseRow's answer", again, want)
}

func testReleaseRenewed(t *testing.T, tbl ListerTable, prefix string) {
	held := record(prefix+"k", "*", 5, "live-holder")
	if _, err := tbl.Create(ctx(t), held); err != nil {
		t.Fatal(err)
	}
	renewed := held
	renewed.Generation = 6
	if _, err := tbl.Replace(ctx(t), renewed, 5); err != nil {
		t.Fatal(err)
	}
	// The operator read generation 5 before the holder renewed.
	current, err := dynamolease.ReleaseRow(ctx(t), tbl, held.Path, "*", 5)
	if !errors.Is(err, dynamolease.ErrReleaseGeneration) {
		t.Fatalf("ReleaseRow at a generation renewed since: %v, want ErrReleaseGeneration", err)
	}
	assertRecord(t, "row ReleaseRow reports", current, renewed)
	assertRecord(t, "row after the refused ReleaseRow", mustGet(t, tbl, held.Path, "*"), renewed)
}

func testReleaseAbsent(t *testing.T, tbl ListerTable, prefix string) {
	if _, err := dynamolease.ReleaseRow(ctx(t), tbl, prefix+"none", "*", 0); !errors.Is(err, dynamolease.ErrNoLeaseRow) {
		t.Fatalf("ReleaseRow of an absent row: %v, want ErrNoLeaseRow", err)
	}
	if r := mustGet(t, tbl, prefix+"none", "*"); r != nil {
		t.Fatalf("ReleaseRow of an absent row created %+v", *r)
	}
}

// takeovers counts the Committer's takeovers by kind.
type takeovers struct{ released, stale atomic.Int32 }

func (o *takeovers) AcquireDone(time.Duration, error) {}
func (o *takeovers) Renewed()                         {}
func (o *takeovers) Lost()                            {}
func (o *takeovers) TookOver(released bool) {
	if released {
		o.released.Add(1)
	} else {
		o.stale.Add(1)
	}
}

// A dead holder's row makes a writer wait out timeout × skew (here far
// beyond its wait budget); once released, the writer takes it over at once.
func testReleaseTakeover(t *testing.T, tbl ListerTable, prefix string) {
	dead := record(prefix+"k", "*", 0, "killed-holder")
	dead.Timeout = 20 * time.Second
	if _, err := tbl.Create(ctx(t), dead); err != nil {
		t.Fatal(err)
	}
	var seen takeovers
	c := dynamolease.NewCommitter(tbl, dynamolease.Options{Timeout: 20 * time.Second, MaxClockSkewRate: 3,
		PollInterval: 20 * time.Millisecond, WaitBudget: 300 * time.Millisecond, Observer: &seen}, zerolog.Nop())
	if _, err := c.Acquire(ctx(t), dead.Path, "*", nil); !errors.Is(err, dynamolease.ErrWaitBudgetExceeded) {
		t.Fatalf("Acquire over the dead holder's row: %v, want ErrWaitBudgetExceeded", err)
	}
	if _, err := dynamolease.ReleaseRow(ctx(t), tbl, dead.Path, "*", 0); err != nil {
		t.Fatal(err)
	}
	lease, err := c.Acquire(ctx(t), dead.Path, "*", nil)
	if err != nil {
		t.Fatalf("Acquire after ReleaseRow: %v", err)
	}
	if lease.Generation() != 2 || seen.released.Load() != 1 || seen.stale.Load() != 0 {
		t.Fatalf("after ReleaseRow: generation %d, %d released and %d stale takeovers; want generation 2 won as 1 released takeover",
			lease.Generation(), seen.released.Load(), seen.stale.Load())
	}
	if err := lease.Release(ctx(t)); err != nil {
		t.Fatal(err)
	}
}

package tabletest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
)

// batchCases are the cases of a BatchTable; Run runs them on every table
// that is one (each store's own file asserts at compile time that it is).
var batchCases = []struct {
	name string
	run  func(t *testing.T, tbl dynamolease.BatchTable, path string)
}{
	{"AFullBatchIsCreatedAndReplaced", testFullBatch},
	{"CreateInOrderStopsBeforeAnExistingRow", testCreateInOrderStops},
	{"ReplaceEachJudgesEveryRow", testReplaceEach},
	{"RacingBatchesAndCreatesHaveOneWinnerPerRow", testRacingBatches},
}

func batchRows(path string, n int, owner string) []dynamolease.Record {
	rs := make([]dynamolease.Record, n)
	for i := range rs {
		rs[i] = record(fmt.Sprintf("%s/%04d", path, i), quotedETag, 0, fmt.Sprintf("%s-%d", owner, i))
	}
	return rs
}

func testFullBatch(t *testing.T, tbl dynamolease.BatchTable, path string) {
	n := min(tbl.MaxBatch(), 1000)
	if n < 2 {
		t.Fatalf("MaxBatch = %d, want at least 2", tbl.MaxBatch())
	}
	rs := batchRows(path, n, "batch")
	created, existing, err := tbl.CreateInOrder(ctx(t), rs)
	if err != nil || created != n || existing != nil {
		t.Fatalf("CreateInOrder of %d new rows = %d, %v, %v; want all created", n, created, existing, err)
	}
	for _, r := range rs {
		assertRecord(t, "row created in a batch", mustGet(t, tbl, r.Path, r.ETag), r)
	}
	released, seen := make([]dynamolease.Record, n), make([]uint64, n)
	for i, r := range rs {
		released[i] = r
		released[i].Released = true
	}
	written, _, err := tbl.ReplaceEach(ctx(t), released, seen)
	if err != nil {
		t.Fatalf("ReplaceEach of %d rows: %v", n, err)
	}
	for i, r := range released {
		if !written[i] {
			t.Fatalf("row %d of %d not replaced", i, n)
		}
		assertRecord(t, "row replaced in a batch", mustGet(t, tbl, r.Path, r.ETag), r)
	}
}

func testCreateInOrderStops(t *testing.T, tbl dynamolease.BatchTable, path string) {
	rs := batchRows(path, 8, "batch")
	held := record(rs[3].Path, rs[3].ETag, 2, "holder")
	held.Released = true
	if _, err := tbl.Create(ctx(t), held); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Create(ctx(t), record(rs[6].Path, rs[6].ETag, 0, "other")); err != nil {
		t.Fatal(err)
	}
	created, existing, err := tbl.CreateInOrder(ctx(t), rs)
	if err != nil || created != 3 {
		t.Fatalf("CreateInOrder = %d, %v; want 3 created (the row of index 3 exists)", created, err)
	}
	if existing != nil {
		assertRecord(t, "existing row reported", existing, held)
	}
	for i, r := range rs {
		got := mustGet(t, tbl, r.Path, r.ETag)
		switch {
		case i < 3:
			assertRecord(t, "row before the existing one", got, r)
		case i == 3:
			assertRecord(t, "the existing row", got, held)
		case i == 6:
			if got == nil || got.Owner != "other" {
				t.Fatalf("row 6 = %+v, want the other owner's", got)
			}
		case got != nil:
			t.Fatalf("row %d after the existing one was created: %+v", i, *got)
		}
	}
}

func testReplaceEach(t *testing.T, tbl dynamolease.BatchTable, path string) {
	rs := batchRows(path, 4, "holder")
	for _, r := range rs[:3] {
		if _, err := tbl.Create(ctx(t), r); err != nil {
			t.Fatal(err)
		}
	}
	next := make([]dynamolease.Record, len(rs))
	for i, r := range rs {
		next[i] = r
		next[i].Released = true
	}
	// Row 0 at the seen generation, row 1 not, row 2 at it, row 3 absent.
	written, current, err := tbl.ReplaceEach(ctx(t), next, []uint64{0, 5, 0, 0})
	if err != nil {
		t.Fatal(err)
	}
	if len(written) != 4 || len(current) != 4 {
		t.Fatalf("ReplaceEach returned %d and %d results for 4 rows", len(written), len(current))
	}
	if !written[0] || written[1] || !written[2] || written[3] {
		t.Fatalf("written = %v, want [true false true false]", written)
	}
	if current[1] != nil {
		assertRecord(t, "row that failed its generation", current[1], rs[1])
	}
	if current[3] != nil {
		t.Fatalf("absent row reported as %+v", *current[3])
	}
	assertRecord(t, "replaced row 0", mustGet(t, tbl, rs[0].Path, rs[0].ETag), next[0])
	assertRecord(t, "unreplaced row 1", mustGet(t, tbl, rs[1].Path, rs[1].ETag), rs[1])
	assertRecord(t, "replaced row 2", mustGet(t, tbl, rs[2].Path, rs[2].ETag), next[2])
	if got := mustGet(t, tbl, rs[3].Path, rs[3].ETag); got != nil {
		t.Fatalf("ReplaceEach created absent row 3: %+v", *got)
	}
}

// testRacingBatches races batches over the same rows, in the same order,
// against single Creates: every row has exactly one winner, and holds its
// row.
func testRacingBatches(t *testing.T, tbl dynamolease.BatchTable, path string) {
	const rows, batches, singles = 12, 6, 6
	c := ctx(t)
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		claims = map[string][]string{} // row path -> owners that were told they won it
		start  = make(chan struct{})
	)
	claim := func(p, owner string) {
		mu.Lock()
		defer mu.Unlock()
		claims[p] = append(claims[p], owner)
	}
	for b := range batches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rs := batchRows(path, rows, fmt.Sprintf("batch%d", b))
			<-start
			created, _, err := tbl.CreateInOrder(c, rs)
			if err != nil {
				t.Errorf("batch %d: %v", b, err)
				return
			}
			for _, r := range rs[:created] {
				claim(r.Path, r.Owner)
			}
		}()
	}
	for s := range singles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := record(fmt.Sprintf("%s/%04d", path, (s*5)%rows), quotedETag, 0, fmt.Sprintf("single%d", s))
			<-start
			_, err := tbl.Create(c, r)
			switch {
			case err == nil:
				claim(r.Path, r.Owner)
			case !errors.Is(err, dynamolease.ErrConditionFailed):
				t.Errorf("single %d: %v", s, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	for i := range rows {
		p := fmt.Sprintf("%s/%04d", path, i)
		got := mustGet(t, tbl, p, quotedETag)
		owners := claims[p]
		if got == nil {
			if len(owners) > 0 {
				t.Errorf("row %d absent, claimed by %v", i, owners)
			}
			continue
		}
		if len(owners) != 1 || owners[0] != got.Owner {
			t.Errorf("row %d held by %q, claimed by %v; want exactly its holder", i, got.Owner, owners)
		}
	}
}

// runBatch runs batchCases when newTable's tables are BatchTables (a
// Table without batches is legal: the Committer then writes its rows one
// by one).
func runBatch(t *testing.T, newTable func(t *testing.T) dynamolease.Table) {
	if _, ok := newTable(t).(dynamolease.BatchTable); !ok {
		return
	}
	for _, tc := range batchCases {
		t.Run(tc.name, func(t *testing.T) {
			path := fmt.Sprintf("bucket/%s/%d", tc.name, time.Now().UnixNano())
			tc.run(t, newTable(t).(dynamolease.BatchTable), path)
		})
	}
}

package dynamolease_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
)

const etagOne = `"e1"`

// stateCheck is an AcquireRecorded check that notes what it was given:
// vouched for how many times it had a state to evaluate, heads how many
// times it would have read the store (HEAD) instead.
type stateCheck struct {
	vouched, heads int
	last           *dynamolease.KeyState
	fail           error
}

func (s *stateCheck) check(_ context.Context, st *dynamolease.KeyState) error {
	if st == nil {
		s.heads++
	} else {
		s.vouched++
		s.last = st
	}
	return s.fail
}

func acquireRecorded(t *testing.T, c *dynamolease.Committer, etag string, sc *stateCheck) *dynamolease.Lease {
	t.Helper()
	l, err := c.AcquireRecorded(testContext(t, 10*time.Second), "b/k", etag, sc.check)
	if err != nil {
		t.Fatalf("AcquireRecorded(%q): %v", etag, err)
	}
	return l
}

func getRow(t *testing.T, tbl dynamolease.Table, etag string) *dynamolease.Record {
	t.Helper()
	r, err := tbl.Get(context.Background(), "b/k", etag)
	if err != nil || r == nil {
		t.Fatalf("Get(%q) = %v, %v", etag, r, err)
	}
	return r
}

// createThenRecord: a create of b/k that wrote ETag e1 and released
// recording it; returns the table and a second process.
func createThenRecord(t *testing.T) (dynamolease.Table, *dynamolease.Committer) {
	tbl, first, second := twoProcesses(dynamolease.Options{})
	var sc stateCheck
	l := acquireRecorded(t, first, "*", &sc)
	if sc.heads != 1 || sc.vouched != 0 {
		t.Fatalf("a created row vouches for nothing: check saw %d states, read the store %d times; want 0, 1", sc.vouched, sc.heads)
	}
	l.RecordOutcome(dynamolease.KeyState{Exists: true, ETag: etagOne})
	if err := l.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	return tbl, second
}

// The release records the outcome in the row it held, and creates the row
// of the new version vouching for it: the next writer of that version
// evaluates on it and reads nothing from the store.
func TestReleaseRecordsOutcomeAndNextWriterSkipsTheRead(t *testing.T) {
	tbl, next := createThenRecord(t)
	if ks := getRow(t, tbl, "*").KeyState; ks == nil || !ks.Exists || ks.ETag != etagOne {
		t.Fatalf("row * records %+v; want exists %s", ks, etagOne)
	}
	var sc stateCheck
	l := acquireRecorded(t, next, etagOne, &sc)
	defer func() { _ = l.Release(context.Background()) }()
	if sc.heads != 0 || sc.vouched == 0 || sc.last.ETag != etagOne || !sc.last.Exists {
		t.Fatalf("check read the store %d times, saw %+v; want no read and exists %s", sc.heads, sc.last, etagOne)
	}
	if f := l.Found(); f == nil || f.ETag != etagOne {
		t.Fatalf("Found() = %+v; want exists %s", f, etagOne)
	}
}

// A record naming another version than its row's says where the key went,
// not where it is (it may have been deleted and created again since): the
// next create reads the store.
func TestRecordOfAnotherVersionIsNotTrusted(t *testing.T) {
	_, next := createThenRecord(t)
	var sc stateCheck
	l := acquireRecorded(t, next, "*", &sc)
	defer func() { _ = l.Release(context.Background()) }()
	if sc.vouched != 0 || sc.heads == 0 || l.Found() != nil {
		t.Fatalf("check saw %d states (%+v), read the store %d times; want only reads", sc.vouched, sc.last, sc.heads)
	}
}

// A holder that vanished leaves no record: whoever takes its row over
// after the wait reads the store.
func TestTakeoverAfterVanishedHolderReadsTheStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tbl, next := createThenRecord(t)
		var vanishedCheck stateCheck
		_ = acquireRecorded(t, next, etagOne, &vanishedCheck) // never released
		if getRow(t, tbl, etagOne).KeyState != nil {
			t.Fatal("a held row still carries a record")
		}
		third := dynamolease.NewCommitter(tbl, dynamolease.Options{WaitBudget: 2 * defaultTakeover}, zerolog.Nop())
		var sc stateCheck
		l, err := third.AcquireRecorded(testContext(t, 3*defaultTakeover), "b/k", etagOne, sc.check)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = l.Release(context.Background()) }()
		if sc.vouched != 0 || sc.heads == 0 || l.Found() != nil {
			t.Fatalf("after a takeover check saw %d states, read the store %d times; want only reads", sc.vouched, sc.heads)
		}
	})
}

// A release without an outcome (unknown, or a write that records none)
// clears the record its row had.
func TestReleaseWithoutOutcomeClearsTheRecord(t *testing.T) {
	tbl, next := createThenRecord(t)
	var sc stateCheck
	l := acquireRecorded(t, next, etagOne, &sc)
	if err := l.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ks := getRow(t, tbl, etagOne).KeyState; ks != nil {
		t.Fatalf("row released without an outcome records %+v", ks)
	}
}

// A failed check on a vouched state wrote nothing: the row vouches on.
func TestFailedCheckOnVouchedStateKeepsTheRecord(t *testing.T) {
	tbl, next := createThenRecord(t)
	refused := errors.New("412")
	sc := stateCheck{fail: refused}
	if _, err := next.AcquireRecorded(testContext(t, 10*time.Second), "b/k", etagOne, sc.check); !errors.Is(err, refused) {
		t.Fatalf("AcquireRecorded = %v; want the check's error", err)
	}
	if ks := getRow(t, tbl, etagOne).KeyState; ks == nil || ks.ETag != etagOne {
		t.Fatalf("row records %+v after a refused write; want exists %s", ks, etagOne)
	}
}

// The row of the new version is created only when absent: an existing one
// may have been taken by a write after ours.
func TestBirthOnlyWhereNoRowExists(t *testing.T) {
	tbl, first, other := twoProcesses(dynamolease.Options{})
	held := mustAcquire(t, other, "b/k", etagOne)
	defer func() { _ = held.Release(context.Background()) }()
	var sc stateCheck
	l := acquireRecorded(t, first, "*", &sc)
	l.RecordOutcome(dynamolease.KeyState{Exists: true, ETag: etagOne})
	if err := l.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := getRow(t, tbl, etagOne); r.KeyState != nil || r.Released {
		t.Fatalf("existing row was overwritten: %+v", *r)
	}
}

// Acquire (outside strict mode) reads the store whatever a row records.
func TestPlainAcquireIgnoresRecords(t *testing.T) {
	_, next := createThenRecord(t)
	reads := 0
	l, err := next.Acquire(testContext(t, 10*time.Second), "b/k", etagOne, func(context.Context) error { reads++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Release(context.Background()) }()
	if reads == 0 {
		t.Fatal("Acquire trusted a record: the check never read the store")
	}
}

// requestCountingTable is a MemTable (standing for DynamoDB) that counts the
// requests a Committer makes of it.
type requestCountingTable struct {
	*dynamolease.MemTable
	calls atomic.Int32
}

func (c *requestCountingTable) Create(ctx context.Context, r dynamolease.Record) (*dynamolease.Record, error) {
	c.calls.Add(1)
	return c.MemTable.Create(ctx, r)
}

func (c *requestCountingTable) Replace(ctx context.Context, r dynamolease.Record, seen uint64) (*dynamolease.Record, error) {
	c.calls.Add(1)
	return c.MemTable.Replace(ctx, r, seen)
}

func (c *requestCountingTable) Get(ctx context.Context, path, etag string) (*dynamolease.Record, error) {
	c.calls.Add(1)
	return c.MemTable.Get(ctx, path, etag)
}

func (c *requestCountingTable) CreateOrTakeVouched(ctx context.Context, r dynamolease.Record) (*dynamolease.Record, error) {
	c.calls.Add(1)
	return c.MemTable.CreateOrTakeVouched(ctx, r)
}

// On a table that takes a vouched row in one request, the writer after a
// recorded write holds its lease after one lease-store round trip.
func TestVouchedRowTakenInOneRequest(t *testing.T) {
	tbl := &requestCountingTable{MemTable: dynamolease.NewMemTable()}
	first := dynamolease.NewCommitter(tbl, dynamolease.Options{}, zerolog.Nop())
	var sc stateCheck
	l := acquireRecorded(t, first, "*", &sc)
	l.RecordOutcome(dynamolease.KeyState{Exists: true, ETag: etagOne})
	if err := l.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	next := dynamolease.NewCommitter(tbl, dynamolease.Options{}, zerolog.Nop())
	tbl.calls.Store(0)
	sc = stateCheck{}
	l = acquireRecorded(t, next, etagOne, &sc)
	defer func() { _ = l.Release(context.Background()) }()
	if tbl.calls.Load() != 1 || sc.heads != 0 || l.Found() == nil {
		t.Fatalf("%d lease-store requests, %d store reads, found %+v; want 1, 0, exists %s", tbl.calls.Load(), sc.heads, l.Found(), etagOne)
	}
}

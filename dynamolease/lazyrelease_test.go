package dynamolease

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/rs/zerolog"
)

// lazyRecordingTable is the in-memory table, recording for each release
// whether the Committer let the table take its time over it.
type lazyRecordingTable struct {
	Table
	mu   sync.Mutex
	lazy []bool
}

func (r *lazyRecordingTable) Replace(ctx context.Context, rec Record, seen uint64) (*Record, error) {
	r.record(rec, false)
	return r.Table.Replace(ctx, rec, seen)
}

func (r *lazyRecordingTable) ReplaceLazily(ctx context.Context, rec Record, seen uint64) (*Record, error) {
	r.record(rec, true)
	return r.Table.Replace(ctx, rec, seen)
}

func (r *lazyRecordingTable) record(rec Record, lazy bool) {
	if rec.Released {
		r.mu.Lock()
		r.lazy = append(r.lazy, lazy)
		r.mu.Unlock()
	}
}

func (r *lazyRecordingTable) lastRelease(t *testing.T) bool {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.lazy) == 0 {
		t.Fatal("no release reached the table")
	}
	return r.lazy[len(r.lazy)-1]
}

func TestOnlyAnUnawaitedUncontendedReleaseIsLazy(t *testing.T) {
	// In a bubble, so that the test knows when the second writer has queued.
	synctest.Test(t, func(t *testing.T) {
		table := &lazyRecordingTable{Table: NewMemTable()}
		c := NewCommitter(table, Options{}, zerolog.Nop())
		ctx := context.Background()

		lease, err := c.Acquire(ctx, "b/awaited", "*", nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := lease.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if table.lastRelease(t) {
			t.Fatal("a release its caller waits for was lazy")
		}

		lease, err = c.Acquire(ctx, "b/background", "*", nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := lease.ReleaseNotAwaited(ctx); err != nil {
			t.Fatal(err)
		}
		if !table.lastRelease(t) {
			t.Fatal("a release nobody waits for was not lazy")
		}

		// A second local writer queues for the same row: the release is urgent.
		lease, err = c.Acquire(ctx, "b/contended", "*", nil)
		if err != nil {
			t.Fatal(err)
		}
		next := make(chan error, 1)
		go func() {
			l, err := c.Acquire(ctx, "b/contended", "*", nil)
			if err == nil {
				err = l.Release(ctx)
			}
			next <- err
		}()
		synctest.Wait() // the second writer has queued, or given up
		if !c.local.contended(lease.state) {
			t.Fatal("the second writer never queued for the row")
		}
		if err := lease.ReleaseNotAwaited(ctx); err != nil {
			t.Fatal(err)
		}
		table.mu.Lock()
		contendedLazy := table.lazy[2]
		table.mu.Unlock()
		if contendedLazy {
			t.Fatal("a release another local writer was waiting for was lazy")
		}
		if err := <-next; err != nil {
			t.Fatalf("the waiting writer: %v", err)
		}
	})
}

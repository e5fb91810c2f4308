package boltstore

import (
	"context"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	bolt "go.etcd.io/bbolt"
)

// newTestCommitter opens a bolt file in a temporary directory and starts a
// group committer on it with the given lazy delay.
func newTestCommitter(t *testing.T, lazyDelay time.Duration) *groupCommitter {
	t.Helper()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "leases.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(leaseBucket)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	g := startGroupCommitter(db, lazyDelay, nil)
	t.Cleanup(func() {
		g.close()
		_ = db.Close()
	})
	return g
}

func putKey(key string) func(*bolt.Bucket) error {
	return func(b *bolt.Bucket) error { return b.Put([]byte(key), []byte("v")) }
}

// queueLazy hands a lazy write of key to the committer, as write does, and
// returns once the committer has taken it; its outcome arrives on the
// channel returned.
func queueLazy(g *groupCommitter, key string) <-chan error {
	w := boltWrite{apply: putKey(key), done: make(chan error, 1), lazy: true}
	g.writes <- w // unbuffered: the committer holds it when this returns
	return w.done
}

func TestLazyWriteSharesTheNextUrgentCommit(t *testing.T) {
	// In a bubble: the test knows when the committer waits with the lazy
	// write, and the minute's delay cannot pass unseen on a slow machine.
	synctest.Test(t, func(t *testing.T) {
		// A long delay, so that the urgent write surely comes within it.
		g := newTestCommitter(t, time.Minute)
		lazyDone := queueLazy(g, "release")
		synctest.Wait() // the committer holds the lazy write and waits for company or its delay
		select {
		case err := <-lazyDone:
			t.Fatalf("the lazy write committed alone (err %v), without waiting for company", err)
		default:
		}
		if err := g.write(context.Background(), putKey("acquire"), false); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-lazyDone:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the lazy write did not commit with the urgent one")
		}
		if n := g.transactions.Load(); n != 1 {
			t.Fatalf("%d transactions, want 1 shared by both writes", n)
		}
		if err := g.db.View(func(tx *bolt.Tx) error {
			b := tx.Bucket(leaseBucket)
			if b.Get([]byte("release")) == nil || b.Get([]byte("acquire")) == nil {
				t.Error("a write of the shared transaction is missing")
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestLoneLazyWriteCommitsAfterTheDelay(t *testing.T) {
	const delay = 30 * time.Millisecond
	g := newTestCommitter(t, delay)
	start := time.Now()
	if err := g.write(context.Background(), putKey("release"), true); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < delay {
		t.Fatalf("a lone lazy write committed after %v, before the %v delay", waited, delay)
	}
	// An urgent write alone is never delayed: it commits at once, however
	// long the lazy delay.
	g2 := newTestCommitter(t, time.Minute)
	done := make(chan error, 1)
	go func() { done <- g2.write(context.Background(), putKey("acquire"), false) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("an urgent write waited for company")
	}
}

func TestCloseCommitsAWaitingLazyWrite(t *testing.T) {
	g := newTestCommitter(t, time.Minute)
	done := queueLazy(g, "release")
	g.close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("a lazy write waiting at close: %v, want it committed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("close left a lazy write waiting")
	}
}

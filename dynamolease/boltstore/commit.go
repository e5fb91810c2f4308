package boltstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// errBoltClosed answers writes that arrive after Close.
var errBoltClosed = errors.New("dynamolease: the lease file is closed")

// maxGroupCommit bounds how many writes share one transaction.
const maxGroupCommit = 256

// lazyCommitDelay is how long a lazy write (a lease release) may wait for
// an urgent one to share its transaction.
//
// Why: every conditional write commits twice, acquire and release; a release
// that waits for the next acquire halves the transactions. Where commits are
// synced (no boot id, durability.go) each transaction costs two fdatasyncs,
// and sharing them makes conditional creates about 7-8% faster; where they are
// not, a transaction is a few page writes and the gain is within measurement
// noise. Only releases that no goroutine of this process waits for are lazy
// (ReplaceLazily): the caller made it with Lease.ReleaseNotAwaited (the proxy
// releases after the answer, in the background) and no local goroutine wants
// the row next (with the embedded table there is no other process), so nobody
// waits longer.
const lazyCommitDelay = 2 * time.Millisecond

// boltWrite is one conditional write waiting for the group committer. apply
// runs inside the shared transaction: it returns dynamolease.ErrConditionFailed
// (or another per-write error) as its own outcome, which never aborts the
// transaction for the other writes in it. A lazy write may wait up to
// lazyCommitDelay for an urgent one to commit with.
type boltWrite struct {
	apply func(*bolt.Bucket) error
	done  chan error
	lazy  bool
}

// groupCommitter is the one goroutine that writes the lease file. bbolt
// runs one writer at a time, and each transaction has a fixed cost (its
// page and meta writes, and two fsyncs where commits are synced), so
// writes made one by one queue behind each other. The committer takes
// every write queued while the previous transaction ran into the next one:
// concurrent writers share one transaction, and a lone urgent writer is
// never delayed (unlike bolt.DB.Batch, which waits for company); only lazy
// writes wait, briefly, for company.
type groupCommitter struct {
	db *bolt.DB
	// guard, when set, runs before each transaction; its error fails every
	// write in it (the lease file's watch, identity.go).
	guard     func() error
	lazyDelay time.Duration // lazyCommitDelay, but for tests
	writes    chan boltWrite
	stop      chan struct{}
	stopOnce  sync.Once
	done      chan struct{}
	// transactions counts the commits made, for tests.
	transactions atomic.Int64
}

func startGroupCommitter(db *bolt.DB, lazyDelay time.Duration, guard func() error) *groupCommitter {
	g := &groupCommitter{db: db, guard: guard, lazyDelay: lazyDelay, writes: make(chan boltWrite),
		stop: make(chan struct{}), done: make(chan struct{})}
	go g.run()
	return g
}

// write queues apply and waits for the transaction that ran it to commit.
func (g *groupCommitter) write(ctx context.Context, apply func(*bolt.Bucket) error, lazy bool) error {
	w := boltWrite{apply: apply, done: make(chan error, 1), lazy: lazy}
	select {
	case g.writes <- w:
	case <-g.stop:
		return errBoltClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	// Once queued, the write commits or fails as a whole; waiting for it
	// keeps the caller's view of the row true even if ctx ends meanwhile.
	return <-w.done
}

func (g *groupCommitter) run() {
	defer close(g.done)
	delay := time.NewTimer(g.lazyDelay)
	delay.Stop()
	for {
		var first boltWrite
		select {
		case first = <-g.writes:
		case <-g.stop:
			return
		}
		batch, urgent := g.takeQueued([]boltWrite{first}, !first.lazy)
		if !urgent {
			batch = g.waitForUrgent(batch, delay)
		}
		g.commit(batch)
	}
}

// takeQueued adds the writes already queued to batch, and reports whether
// any write in it is urgent.
func (g *groupCommitter) takeQueued(batch []boltWrite, urgent bool) ([]boltWrite, bool) {
	for len(batch) < maxGroupCommit {
		select {
		case w := <-g.writes:
			batch = append(batch, w)
			urgent = urgent || !w.lazy
		default:
			return batch, urgent
		}
	}
	return batch, urgent
}

// waitForUrgent holds a batch of lazy writes until an urgent write comes to
// share its transaction, the lazy delay passes, the batch is full or the
// committer stops.
func (g *groupCommitter) waitForUrgent(batch []boltWrite, delay *time.Timer) []boltWrite {
	delay.Reset(g.lazyDelay)
	defer delay.Stop()
	for len(batch) < maxGroupCommit {
		select {
		case w := <-g.writes:
			batch = append(batch, w)
			if !w.lazy {
				batch, _ = g.takeQueued(batch, true)
				return batch
			}
		case <-delay.C:
			return batch
		case <-g.stop:
			return batch
		}
	}
	return batch
}

func (g *groupCommitter) commit(batch []boltWrite) {
	if g.guard != nil {
		if err := g.guard(); err != nil {
			for _, w := range batch {
				w.done <- err
			}
			return
		}
	}
	outcomes := make([]error, len(batch))
	g.transactions.Add(1)
	err := g.db.Update(func(tx *bolt.Tx) error {
		bucket := tx.Bucket(leaseBucket)
		for i, w := range batch {
			outcomes[i] = w.apply(bucket)
		}
		return nil
	})
	for i, w := range batch {
		if err != nil {
			w.done <- fmt.Errorf("commit lease file: %w", err)
			continue
		}
		w.done <- outcomes[i]
	}
}

// close stops the committer after the transaction in progress (and any
// lazy writes it was holding). Closing twice is a no-op.
func (g *groupCommitter) close() {
	g.stopOnce.Do(func() { close(g.stop) })
	<-g.done
}

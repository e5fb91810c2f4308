package dynamolease

import (
	"context"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// errBoltClosed answers writes that arrive after Close.
var errBoltClosed = errors.New("dynamolease: the lease file is closed")

// maxGroupCommit bounds how many writes share one transaction.
const maxGroupCommit = 256

// boltWrite is one conditional write waiting for the group committer.
// apply runs inside the shared transaction: it returns ErrConditionFailed
// (or another per-write error) as its own outcome, which never aborts the
// transaction for the other writes in it.
type boltWrite struct {
	apply func(*bolt.Bucket) error
	done  chan error
}

// groupCommitter is the one goroutine that writes the lease file. Each
// bbolt transaction costs an fsync, and bbolt runs one writer at a time, so
// writes made one by one queue behind each other's fsyncs. The committer
// takes every write queued while the previous transaction was syncing into
// the next one: concurrent writers share one fsync, and a lone writer is
// never delayed (unlike bolt.DB.Batch, which waits for company).
type groupCommitter struct {
	db     *bolt.DB
	writes chan boltWrite
	stop   chan struct{}
	done   chan struct{}
}

func startGroupCommitter(db *bolt.DB) *groupCommitter {
	g := &groupCommitter{db: db, writes: make(chan boltWrite), stop: make(chan struct{}), done: make(chan struct{})}
	go g.run()
	return g
}

// write queues apply and waits for the transaction that ran it to commit.
func (g *groupCommitter) write(ctx context.Context, apply func(*bolt.Bucket) error) error {
	w := boltWrite{apply: apply, done: make(chan error, 1)}
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
	for {
		var first boltWrite
		select {
		case first = <-g.writes:
		case <-g.stop:
			return
		}
		batch := []boltWrite{first}
	drain:
		for len(batch) < maxGroupCommit {
			select {
			case w := <-g.writes:
				batch = append(batch, w)
			default:
				break drain
			}
		}
		g.commit(batch)
	}
}

func (g *groupCommitter) commit(batch []boltWrite) {
	outcomes := make([]error, len(batch))
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

// close stops the committer after the transaction in progress.
func (g *groupCommitter) close() {
	close(g.stop)
	<-g.done
}

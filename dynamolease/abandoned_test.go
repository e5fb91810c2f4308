package dynamolease_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
)

// landingTable stands for a table whose conditional writes land but whose
// answers are lost while lost is set (a timeout after the cluster applied
// the write: etcd applies a proposal that outlived its client's deadline
// once it has quorum again).
type landingTable struct {
	dynamolease.Table
	lostCreates, lostReplaces atomic.Bool
}

var errAnswerLost = errors.New("context deadline exceeded")

func (l *landingTable) Create(ctx context.Context, r dynamolease.Record) (*dynamolease.Record, error) {
	existing, err := l.Table.Create(ctx, r)
	if l.lostCreates.Load() {
		return nil, errAnswerLost
	}
	return existing, err
}

func (l *landingTable) Replace(ctx context.Context, r dynamolease.Record, seen uint64) (*dynamolease.Record, error) {
	current, err := l.Table.Replace(ctx, r, seen)
	if l.lostReplaces.Load() {
		return nil, errAnswerLost
	}
	return current, err
}

// A create or takeover that failed with a table error, yet landed, leaves
// a row nobody holds. The committer that wrote it releases it once the
// table answers again, so another process takes the key at once instead of
// waiting timeout × skew (here 20 s, far past the 2 s wait budget).
func TestRowOfAFailedWriteThatLandedIsReleased(t *testing.T) {
	for _, takeover := range []bool{false, true} {
		name := "create"
		if takeover {
			name = "takeover"
		}
		t.Run(name, func(t *testing.T) {
			opts := fastOptions()
			opts.Timeout, opts.WaitBudget = 10*time.Second, 2*time.Second
			tbl := &landingTable{Table: dynamolease.NewMemTable()}
			failing := dynamolease.NewCommitter(tbl, opts, zerolog.Nop())
			other := dynamolease.NewCommitter(tbl, opts, zerolog.Nop())
			if takeover {
				if err := mustAcquire(t, other, "b/k", "*").Release(testContext(t, 5*time.Second)); err != nil {
					t.Fatal(err)
				}
			}

			lost := &tbl.lostCreates
			if takeover {
				lost = &tbl.lostReplaces
			}
			lost.Store(true)
			_, err := failing.Acquire(testContext(t, 5*time.Second), "b/k", "*", nil)
			var storeErr *dynamolease.StoreError
			if !errors.As(err, &storeErr) {
				t.Fatalf("Acquire with lost answers = %v, want *StoreError", err)
			}
			row, _ := tbl.Get(testContext(t, time.Second), "b/k", "*")
			if row == nil || row.Released {
				t.Fatalf("the failed write did not land as an unreleased row: %+v", row)
			}
			lost.Store(false)

			lease := mustAcquire(t, other, "b/k", "*")
			if err := lease.Release(testContext(t, 5*time.Second)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

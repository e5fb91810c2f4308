package leasedwrite

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/leasetest"
)

// Finishing a rename a vanished holder left holds both keys' rename locks
// for as long as it runs: through a delete at the store that outlasts the
// locks' plain timeout several times over, they are renewed, and another
// s3cond waiting for one does not take it over.
func TestFinishingALeftRenameKeepsItsLocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		table := leasetest.New(leasetest.Hooks{})
		const etag = `"1"`
		store := newMemBucket(map[string]string{"src": etag, "dst": etag}) // the copy landed
		ctx := context.Background()
		vanished := table.Committer("vanished", leasetest.Timing{Timeout: 100 * time.Millisecond})
		intent := renameIntent{Bucket: "bucket", Source: "src", Destination: "dst", SourceETag: etag, Stage: stageCopied, CopyETag: etag}
		for _, path := range []string{"bucket/src", "bucket/dst"} {
			if err := vanished.PutRenameIntent(ctx, path, intent.encode()); err != nil {
				t.Fatal(err)
			}
		}
		const timeout = time.Second
		w := New(Options{Leases: table.Committer("finisher", leasetest.Timing{Timeout: timeout}), LeaseTimeout: timeout, Log: zerolog.Nop()})
		// Another s3cond wants the source's rename lock while the delete
		// runs, waiting four plain timeouts: a lock left unrenewed is
		// taken over after timeout × skew (2 s here).
		contender := table.Committer("contender", leasetest.Timing{Timeout: timeout, WaitBudget: 4 * timeout})
		var contenderErr error
		store.deleting = func() {
			var lease *dynamolease.Lease
			lease, contenderErr = contender.Acquire(ctx, "bucket/src", dynamolease.RenameLockETag, nil)
			if contenderErr == nil {
				_ = lease.Release(ctx)
			}
		}
		finished, err := w.finishRenamesOf(ctx, store, "bucket", "src")
		if err != nil || !finished {
			t.Fatalf("finish: %v %v", finished, err)
		}
		if contenderErr == nil {
			t.Fatal("another s3cond took the source's rename lock while the finish still held it")
		}
		if err := w.WaitForReleases(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

package boltstore_test

import (
	"errors"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/boltstore"
	"github.com/s3cond/s3cond/dynamolease/tabletest"
)

// The embedded lease file while s3cond runs is that process's alone: the
// offline tools say so instead of waiting or writing beside it; once it has
// stopped they read it, and release a row the next process then sees.
func TestLeaseFileOfflineListAndRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	ctx := testContext(t, 10*time.Second)
	if _, err := boltstore.ReadLeaseFile(path, ""); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadLeaseFile with no file: %v, want fs.ErrNotExist", err)
	}
	running, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	held := dynamolease.Record{Path: "b/k", ETag: "*", Generation: 2, Timeout: 20 * time.Second,
		TTL: time.Now().Add(time.Hour), Owner: "killed:1#token/1"}
	if _, err := running.Create(ctx, held); err != nil {
		t.Fatal(err)
	}
	if _, err := boltstore.ReadLeaseFile(path, ""); !errors.Is(err, boltstore.ErrLeaseFileInUse) {
		t.Fatalf("ReadLeaseFile while the file is open: %v, want ErrLeaseFileInUse", err)
	}
	if _, err := boltstore.ReleaseInLeaseFile(ctx, path, "b/k", "*", 2); !errors.Is(err, boltstore.ErrLeaseFileInUse) {
		t.Fatalf("ReleaseInLeaseFile while the file is open: %v, want ErrLeaseFileInUse", err)
	}
	if err := running.Close(); err != nil {
		t.Fatal(err)
	}

	rows, err := boltstore.ReadLeaseFile(path, "b/")
	if err != nil || len(rows) != 1 || rows[0].Owner != held.Owner || rows[0].Generation != 2 || rows[0].Released {
		t.Fatalf("ReadLeaseFile after the process stopped = %+v, %v; want the held row", rows, err)
	}
	if _, err := boltstore.ReleaseInLeaseFile(ctx, path, "b/k", "*", 1); !errors.Is(err, dynamolease.ErrReleaseGeneration) {
		t.Fatalf("ReleaseInLeaseFile at a stale generation: %v, want ErrReleaseGeneration", err)
	}
	released, err := boltstore.ReleaseInLeaseFile(ctx, path, "b/k", "*", 2)
	if err != nil || released.Generation != 3 || !released.Released {
		t.Fatalf("ReleaseInLeaseFile = %+v, %v; want generation 3, released", released, err)
	}

	next := openBolt(t, path)
	if why, _, discarded := next.Discarded(); discarded {
		t.Fatalf("the next process discarded the released file: %s", why)
	}
	row, err := next.Get(ctx, "b/k", "*")
	if err != nil || row == nil || row.Generation != 3 || !row.Released || row.Owner != held.Owner {
		t.Fatalf("row seen by the next process = %+v, %v; want generation 3, released, same owner", row, err)
	}
}

func TestBoltTableLister(t *testing.T) {
	tabletest.RunLister(t, func(t *testing.T) tabletest.ListerTable {
		return openBolt(t, filepath.Join(t.TempDir(), "leases.db"))
	})
}

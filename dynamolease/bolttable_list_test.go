package dynamolease_test

import (
	"errors"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
)

// The embedded lease file while s3cond runs is that process's alone: the
// offline tools say so instead of waiting or writing beside it; once it has
// stopped they read it, and release a row the next process then sees.
func TestLeaseFileOfflineListAndRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	ctx := testContext(t, 10*time.Second)
	if _, err := dynamolease.ReadLeaseFile(path, ""); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadLeaseFile with no file: %v, want fs.ErrNotExist", err)
	}
	running, err := dynamolease.OpenBolt(path, dynamolease.BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	held := dynamolease.Record{Path: "b/k", ETag: "*", Generation: 2, Timeout: 20 * time.Second,
		TTL: time.Now().Add(time.Hour), Owner: "killed:1#token/1"}
	if _, err := running.Create(ctx, held); err != nil {
		t.Fatal(err)
	}
	if _, err := dynamolease.ReadLeaseFile(path, ""); !errors.Is(err, dynamolease.ErrLeaseFileInUse) {
		t.Fatalf("ReadLeaseFile while the file is open: %v, want ErrLeaseFileInUse", err)
	}
	if _, err := dynamolease.ReleaseInLeaseFile(ctx, path, "b/k", "*", 2); !errors.Is(err, dynamolease.ErrLeaseFileInUse) {
		t.Fatalf("ReleaseInLeaseFile while the file is open: %v, want ErrLeaseFileInUse", err)
	}
	if err := running.Close(); err != nil {
		t.Fatal(err)
	}

	rows, err := dynamolease.ReadLeaseFile(path, "b/")
	if err != nil || len(rows) != 1 || rows[0].Owner != held.Owner || rows[0].Generation != 2 || rows[0].Released {
		t.Fatalf("ReadLeaseFile after the process stopped = %+v, %v; want the held row", rows, err)
	}
	if _, err := dynamolease.ReleaseInLeaseFile(ctx, path, "b/k", "*", 1); !errors.Is(err, dynamolease.ErrReleaseGeneration) {
		t.Fatalf("ReleaseInLeaseFile at a stale generation: %v, want ErrReleaseGeneration", err)
	}
	released, err := dynamolease.ReleaseInLeaseFile(ctx, path, "b/k", "*", 2)
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

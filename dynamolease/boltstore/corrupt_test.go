package boltstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/boltstore"
)

// writeLeaseFile makes a closed lease file with rows enough for branch
// pages, so its state file records the file's identity (identity.go)
// and the next Open reads the file's id: the read that crashed on a
// corrupt file.
func writeLeaseFile(t testing.TB, path string) []byte {
	t.Helper()
	tbl, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		if _, err := tbl.Create(context.Background(), dynamolease.Record{Path: fmt.Sprintf("b/k%03d", i), ETag: "*", Owner: "o"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tbl.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// Random bytes over every page after the meta pages, each page's header
// kept: bbolt trusts the element offsets it finds, and reading the file's
// id compared keys past the end of its memory map (SIGSEGV, issue 33
// finding 6). Now the integrity check comes first: a clear error.
func TestBoltRandomPagesAfterTheMetaPagesAreAClearError(t *testing.T) {
	page := os.Getpagesize()
	for seed := range uint64(20) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "leases.db")
			raw := writeLeaseFile(t, path)
			random := rand.New(rand.NewPCG(seed, seed))
			for p := 2 * page; p+page <= len(raw); p += page {
				for i := p + 16; i < p+page; i++ {
					raw[i] = byte(random.Uint32())
				}
			}
			if err := os.WriteFile(path, raw, 0o600); err != nil {
				t.Fatal(err)
			}
			again, err := boltstore.Open(path, boltstore.Options{})
			if err == nil {
				_ = again.Close()
				t.Fatal("Open accepted a lease file of random pages")
			}
			if !errors.Is(err, boltstore.ErrLeaseFileCorrupt) {
				t.Fatalf("error %v, want ErrLeaseFileCorrupt", err)
			}
		})
	}
}

// FuzzOpenCorruptLeaseFile: start-up on a lease file whose meta pages are
// intact and whose other pages are anything returns a table or
// ErrLeaseFileCorrupt, never crashes. Its state file records it, so Open
// reads its id first (the read that crashed).
// Run briefly: go test -run '^$' -fuzz FuzzOpenCorruptLeaseFile -fuzztime 60s ./dynamolease/boltstore/
func FuzzOpenCorruptLeaseFile(f *testing.F) {
	page := os.Getpagesize()
	dir := f.TempDir()
	base := writeLeaseFile(f, filepath.Join(dir, "leases.db"))
	baseState, err := os.ReadFile(filepath.Join(dir, "leases.db.state"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(base[2*page:])
	headersKept := append([]byte(nil), base[2*page:]...)
	random := rand.New(rand.NewPCG(1, 2))
	for i := range headersKept {
		if i%page >= 16 {
			headersKept[i] = byte(random.Uint32())
		}
	}
	f.Add(headersKept)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, pages []byte) {
		path := filepath.Join(t.TempDir(), "leases.db")
		file := append(append([]byte(nil), base[:2*page]...), pages...)
		if err := os.WriteFile(path, file, 0o600); err != nil {
			t.Fatal(err)
		}
		recordLeaseFile(t, baseState, path)
		tbl, err := boltstore.Open(path, boltstore.Options{})
		if err != nil {
			if !errors.Is(err, boltstore.ErrLeaseFileCorrupt) {
				t.Fatalf("error %v, want ErrLeaseFileCorrupt", err)
			}
			return
		}
		_, _ = tbl.Get(context.Background(), "b/k000", "*")
		if _, err := tbl.Create(context.Background(), dynamolease.Record{Path: "b/new", ETag: "*", Owner: "o"}); err != nil {
			t.Logf("create on an accepted file: %v", err)
		}
		_ = tbl.Close()
	})
}

// recordLeaseFile writes path's state file as a clean stop would have
// recorded it: the base file's state (its file id) with path's device,
// inode and size, so that Open trusts the file and reads its id.
func recordLeaseFile(t *testing.T, baseState []byte, path string) {
	t.Helper()
	var state map[string]any
	if err := json.Unmarshal(baseState, &state); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	file := state["file"].(map[string]any)
	file["device"], file["inode"], file["size"] = st.Dev, st.Ino, fi.Size()
	raw, err := json.Marshal(state)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".state", raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

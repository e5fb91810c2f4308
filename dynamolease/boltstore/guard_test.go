package boltstore_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/boltstore"
)

// The lease file deleted under a running process: a second process on the
// same path must still be refused, not start on a fresh file beside it.
func TestBoltLockSurvivesTheLeaseFilesDeletion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	openBolt(t, path)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	second, err := boltstore.Open(path, boltstore.Options{})
	if err == nil {
		_ = second.Close()
		t.Fatal("a second OpenBolt started on the deleted lease file's path while the first still runs")
	}
	if !strings.Contains(err.Error(), "another process holds it") {
		t.Fatalf("error does not say the file is in use: %v", err)
	}
}

// A corrupt lease file is a clear error at open, never a bbolt panic.
func TestBoltCorruptFileIsAClearError(t *testing.T) {
	for name, corrupt := range map[string]func(raw []byte) []byte{
		"garbage throughout": func(raw []byte) []byte { return bytes.Repeat([]byte{0xa5}, len(raw)) },
		"data pages overwritten": func(raw []byte) []byte {
			page := os.Getpagesize()
			for i := 2 * page; i < len(raw); i++ {
				raw[i] = 0xff
			}
			return raw
		},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "leases.db")
			tbl, err := boltstore.Open(path, boltstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tbl.Create(context.Background(), dynamolease.Record{Path: "b/k", ETag: "*", Owner: "o"}); err != nil {
				t.Fatal(err)
			}
			if err := tbl.Close(); err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, corrupt(raw), 0o600); err != nil {
				t.Fatal(err)
			}
			again, err := boltstore.Open(path, boltstore.Options{})
			if err == nil {
				_ = again.Close()
				t.Fatal("OpenBolt accepted a corrupt lease file")
			}
			if !errors.Is(err, boltstore.ErrLeaseFileCorrupt) {
				t.Fatalf("error %v, want ErrLeaseFileCorrupt", err)
			}
		})
	}
}

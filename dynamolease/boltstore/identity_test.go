package boltstore

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
)

// copyOf stands for a backup of the lease file taken at this moment
// (cp, a snapshot): same content and file id, another inode.
func copyOf(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(t.TempDir(), "leases.db.backup")
	if err := os.WriteFile(backup, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return backup
}

// While s3cond runs, the path changing under it (a backup moved over the
// file, the file cut short in place, or deleted) refuses lease writes from
// the next commit on, and logs it once: this process's commits no longer
// reach a file a restart would read.
func TestLeaseFileChangedUnderTheProcessRefusesWrites(t *testing.T) {
	for name, change := range map[string]func(t *testing.T, path string){
		"replaced by a backup": func(t *testing.T, path string) {
			if err := os.Rename(copyOf(t, path), path); err != nil {
				t.Fatal(err)
			}
		},
		"truncated in place": func(t *testing.T, path string) {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, fi.Size()/2); err != nil {
				t.Fatal(err)
			}
		},
		"deleted": func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "leases.db")
			var logged bytes.Buffer
			tbl, err := Open(path, Options{Log: zerolog.New(&logged), bootID: bootOf("boot-1")})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = tbl.Close() })
			if err := createRow(t, tbl, "b/before"); err != nil {
				t.Fatal(err)
			}
			change(t, path)
			for range 2 {
				if err := createRow(t, tbl, "b/after"); !errors.Is(err, ErrLeaseFileReplaced) {
					t.Fatalf("create after the file changed = %v, want ErrLeaseFileReplaced", err)
				}
			}
			if n := strings.Count(logged.String(), "no longer the one s3cond opened"); n != 1 {
				t.Fatalf("logged %d times, want once:\n%s", n, logged.String())
			}
		})
	}
}

// The commits of a live process grow the file; that is not a change.
func TestLeaseFileGrowingIsNotAChange(t *testing.T) {
	tbl := openOnBoot(t, filepath.Join(t.TempDir(), "leases.db"), "boot-1", dynamolease.Options{})
	for i := range 2000 {
		if err := createRow(t, tbl, fmt.Sprintf("b/%04d-%s", i, strings.Repeat("k", 200))); err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
	}
	if tbl.watch.lastSize <= tbl.watch.opened.size {
		t.Fatalf("the file did not grow (%d bytes): the test shows nothing", tbl.watch.lastSize)
	}
}

// A file replaced or cut short while s3cond was stopped is not the record
// of the leases held before the stop: the next start discards it and
// refuses lease writes for timeout × skew, as for a missing file.
func TestLeaseFileChangedWhileStoppedIsWaitedOut(t *testing.T) {
	type change func(t *testing.T, path, backup string)
	changes := map[string]change{
		"an older backup moved over it": func(t *testing.T, path, backup string) {
			if err := os.Rename(backup, path); err != nil {
				t.Fatal(err)
			}
		},
		"truncated": func(t *testing.T, path, _ string) {
			if err := os.Truncate(path, 4096); err != nil {
				t.Fatal(err)
			}
		},
	}
	stops := map[string]func(t *testing.T, tbl *Table){
		"after a crash": crash,
		"after a clean close": func(t *testing.T, tbl *Table) {
			if err := tbl.Close(); err != nil {
				t.Fatal(err)
			}
		},
	}
	for changeName, change := range changes {
		for stopName, stop := range stops {
			t.Run(changeName+" "+stopName, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "leases.db")
				first := openWithHeldRow(t, path, "boot-1")
				backup := copyOf(t, path) // holds b/held, not b/later
				if err := createRow(t, first, "b/later"); err != nil {
					t.Fatal(err)
				}
				stop(t, first)
				change(t, path, backup)

				again := openOnBoot(t, path, "boot-1", dynamolease.Options{Timeout: time.Hour, MaxClockSkewRate: 2})
				why, _, discarded := again.Discarded()
				if !discarded {
					t.Fatal("a changed lease file was trusted")
				}
				t.Logf("discarded: %s", why)
				if err := createRow(t, again, "b/later"); !errors.Is(err, ErrLeaseFileRecovering) {
					t.Fatalf("create on the new file = %v, want ErrLeaseFileRecovering", err)
				}
			})
		}
	}
}

// The file a process closed, left in place, is still trusted by the next.
func TestUnchangedLeaseFileIsTrustedAcrossARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	first := openWithHeldRow(t, path, "boot-1")
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again := openOnBoot(t, path, "boot-1", dynamolease.Options{})
	if why, _, discarded := again.Discarded(); discarded {
		t.Fatalf("the unchanged file was discarded: %s", why)
	}
	if !rowExists(t, again, "b/held") {
		t.Fatal("the lease written before the stop is gone")
	}
}

package boltstore

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
)

// bootOf stands for /proc/sys/kernel/random/boot_id on a machine that has
// booted as id (a new id: the machine restarted).
func bootOf(id string) func() (string, error) {
	return func() (string, error) { return id, nil }
}

func openOnBoot(t *testing.T, path, boot string, lease dynamolease.Options) *Table {
	t.Helper()
	tbl, err := Open(path, Options{Lease: lease, bootID: bootOf(boot)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tbl.Close() })
	return tbl
}

// crash stands for the process dying: the committer and the file handle go,
// nothing is synced and the state file is not updated. What was written is
// in the kernel's page cache, as after a real crash of the process.
func crash(t *testing.T, tbl *Table) {
	t.Helper()
	tbl.commits.close()
	if err := tbl.db.Close(); err != nil {
		t.Fatal(err)
	}
	_ = tbl.lock.Close()        // a dead process's locks go with it
	tbl.closeOnce.Do(func() {}) // the cleanup's Close must not mark it synced
}

// heldRowLease is the lease settings of the run that wrote b/held: its
// state file records their sized-lease cap (150 ms) as the longest lease it
// may have granted, so a later run's pause after discarding the file is
// that × skew, not the default cap's 6 minutes × 3 (longest.go).
var heldRowLease = dynamolease.Options{Timeout: 100 * time.Millisecond, SizedLeaseCap: 150 * time.Millisecond, MaxClockSkewRate: 2,
	PollInterval: 10 * time.Millisecond, WaitBudget: 50 * time.Millisecond}

// openWithHeldRow opens the lease file on boot and writes a live lease row,
// b/held, to it.
func openWithHeldRow(t *testing.T, path, boot string) *Table {
	t.Helper()
	tbl := openOnBoot(t, path, boot, heldRowLease)
	if err := createRow(t, tbl, "b/held"); err != nil {
		t.Fatal(err)
	}
	return tbl
}

func createRow(t *testing.T, tbl *Table, path string) error {
	t.Helper()
	_, err := tbl.Create(context.Background(), dynamolease.Record{Path: path, ETag: "*", Timeout: 20 * time.Second, TTL: time.Now().Add(time.Hour)})
	return err
}

func rowExists(t *testing.T, tbl *Table, path string) bool {
	t.Helper()
	r, err := tbl.Get(context.Background(), path, "*")
	if err != nil {
		t.Fatal(err)
	}
	return r != nil
}

func TestUnsyncedLeaseFileIsTrustedAfterTheProcessCrashes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	first := openWithHeldRow(t, path, "boot-1")
	if !first.unsynced || !first.db.NoSync {
		t.Fatal("with a boot id, commits should not be fsynced")
	}
	crash(t, first)

	again := openOnBoot(t, path, "boot-1", dynamolease.Options{})
	if _, _, discarded := again.Discarded(); discarded {
		t.Fatal("the file was discarded although the machine did not restart")
	}
	if !rowExists(t, again, "b/held") {
		t.Fatal("the lease written before the crash is gone")
	}
	if err := createRow(t, again, "b/held"); !errors.Is(err, dynamolease.ErrConditionFailed) {
		t.Fatalf("create over the held lease = %v, want dynamolease.ErrConditionFailed", err)
	}
}

// In a synctest bubble: the pause passes on the bubble's clock, not the
// wall clock (the file I/O is real).
func TestLeaseFileIsDiscardedAfterTheMachineRestartsUnclosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "leases.db")
		first := openWithHeldRow(t, path, "boot-1")
		crash(t, first)

		lease := dynamolease.Options{Timeout: 100 * time.Millisecond, SizedLeaseCap: 150 * time.Millisecond, MaxClockSkewRate: 2,
			PollInterval: 10 * time.Millisecond, WaitBudget: 50 * time.Millisecond}
		opened := time.Now()
		again := openOnBoot(t, path, "boot-2", lease)
		why, writableAt, discarded := again.Discarded()
		if !discarded || why == "" {
			t.Fatal("a file left open on another boot was trusted")
		}
		if wait := writableAt.Sub(opened); wait < 300*time.Millisecond || wait >= 600*time.Millisecond {
			t.Errorf("lease writes resume %s after opening, want the sized-lease cap × skew rate = 300ms", wait)
		}
		if rowExists(t, again, "b/held") {
			t.Error("rows of the untrusted file are still there")
		}

		// Until then every lease write is refused, and the committer says the
		// store is unavailable (the proxy answers 503).
		if err := createRow(t, again, "b/other"); !errors.Is(err, ErrLeaseFileRecovering) {
			t.Fatalf("create while recovering = %v, want ErrLeaseFileRecovering", err)
		}
		if _, err := again.Replace(context.Background(), dynamolease.Record{Path: "b/other", ETag: "*"}, 0); !errors.Is(err, ErrLeaseFileRecovering) {
			t.Fatalf("replace while recovering = %v, want ErrLeaseFileRecovering", err)
		}
		committer := dynamolease.NewCommitter(again, lease, zerolog.Nop())
		_, err := committer.Acquire(context.Background(), "b/other", "*", nil)
		var storeErr *dynamolease.StoreError
		if !errors.As(err, &storeErr) || !errors.Is(err, ErrLeaseFileRecovering) {
			t.Fatalf("Acquire while recovering = %v, want a dynamolease.StoreError wrapping ErrLeaseFileRecovering", err)
		}

		time.Sleep(time.Until(writableAt)) // the bubble's clock: no real wait
		l, err := committer.Acquire(context.Background(), "b/other", "*", nil)
		if err != nil {
			t.Fatalf("Acquire once recovered: %v", err)
		}
		if err := l.Release(context.Background()); err != nil {
			t.Fatal(err)
		}
		// The committer settles rows left behind in a goroutine that ends
		// once none is pending; the bubble must see it end.
		time.Sleep(lease.LongestTakeoverWait())
		synctest.Wait()
	})
}

func TestClosedLeaseFileIsTrustedAfterTheMachineRestarts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	first := openWithHeldRow(t, path, "boot-1")
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(stateFilePath(path))
	var st leaseFileState
	if err == nil {
		err = json.Unmarshal(raw, &st)
	}
	if err != nil || !st.Synced {
		t.Fatalf("state file after Close = %q, %v; want it synced", raw, err)
	}

	again := openOnBoot(t, path, "boot-2", dynamolease.Options{})
	if _, _, discarded := again.Discarded(); discarded {
		t.Fatal("a file closed (and synced) before the restart was discarded")
	}
	if !rowExists(t, again, "b/held") {
		t.Fatal("the lease written before the clean stop is gone")
	}
}

func TestUnreadableStateFileIsNotTrusted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	first := openWithHeldRow(t, path, "boot-1")
	crash(t, first)
	if err := os.WriteFile(stateFilePath(path), []byte("{trunc"), 0o600); err != nil {
		t.Fatal(err)
	}
	again := openOnBoot(t, path, "boot-1", dynamolease.Options{})
	if _, _, discarded := again.Discarded(); !discarded {
		t.Fatal("a lease file with an unreadable state file was trusted")
	}
}

// A file from an s3cond that synced every commit has no state file.
func TestLeaseFileWithoutStateFileIsTrusted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	first := openWithHeldRow(t, path, "boot-1")
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(stateFilePath(path)); err != nil {
		t.Fatal(err)
	}
	again := openOnBoot(t, path, "boot-2", dynamolease.Options{})
	if !rowExists(t, again, "b/held") {
		t.Fatal("a file without a state file was discarded")
	}
}

func TestWithoutABootIDEveryCommitIsSynced(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	tbl, err := Open(path, Options{bootID: func() (string, error) { return "", errors.New("no /proc here") }})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	if tbl.unsynced || tbl.db.NoSync {
		t.Error("without a boot id, commits must be fsynced")
	}
	if _, err := os.Stat(stateFilePath(path)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state file written without a boot id: %v", err)
	}
}

func TestStateFileSaysOpenWhileInUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	openOnBoot(t, path, "boot-7", dynamolease.Options{})
	raw, err := os.ReadFile(stateFilePath(path))
	var st leaseFileState
	if err == nil {
		err = json.Unmarshal(raw, &st)
	}
	if err != nil || st.Synced || st.BootID != "boot-7" || st.File == nil || st.File.FileID == "" {
		t.Fatalf("state file while open = %q, %v; want unsynced on boot-7, with the file's identity", raw, err)
	}
}

func TestReadBootIDOnThisMachine(t *testing.T) {
	id, err := readBootID()
	if _, statErr := os.Stat(bootIDFile); statErr != nil {
		if err == nil {
			t.Fatalf("readBootID = %q without %s", id, bootIDFile)
		}
		return // not Linux: nothing more to check
	}
	if err != nil || len(id) < 8 {
		t.Fatalf("readBootID = %q, %v", id, err)
	}
	again, _ := readBootID()
	if again != id {
		t.Fatalf("boot id changed between reads: %q, %q", id, again)
	}
}

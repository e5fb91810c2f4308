package boltstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The embedded lease file does not fsync its commits. Each commit costs two
// fdatasyncs in bbolt, which on a virtual disk made up about a quarter of
// s3cond's CPU in conditional writes. What fsync buys is only that commits
// survive a crash of the machine; a crash of the process leaves every
// commit in the kernel's page cache, and the next process reads them.
//
// So the file's state is kept beside it, and fsynced, at the two moments
// that matter: when a process opens the file (commits may be in the page
// cache only, from now on, on this boot of the machine) and when it closes
// it (synced). A process that finds the file was open on another boot of
// the machine cannot trust it: it removes it and refuses lease writes until
// any lease that may have been held before the restart has expired by the
// protocol's own rule (the longest lease a row may carry, sized ones
// included, times the clock skew rate, on this process's clock, from its
// start: dynamolease.Options.LongestTakeoverWait). That is the longest a
// contender waits for an unreleased lease, and no write can outlive its
// lease (SPEC §3 step 5).
//
// Without a boot id (not Linux), every commit is synced, as bbolt does by
// default.

// bootIDFile changes on every boot of a Linux kernel.
const bootIDFile = "/proc/sys/kernel/random/boot_id"

// readBootID returns the boot id of the running kernel.
func readBootID() (string, error) {
	b, err := os.ReadFile(bootIDFile)
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(b))
	if id == "" {
		return "", errors.New(bootIDFile + " is empty")
	}
	return id, nil
}

// leaseFileState is what the state file beside the lease file says.
type leaseFileState struct {
	// Synced: every commit in the lease file is on disk.
	Synced bool `json:"synced"`
	// BootID: the boot of the machine during which commits may have been
	// left in the page cache only (when Synced is false).
	BootID string `json:"boot_id,omitempty"`
	// File: the lease file's identity (identity.go); absent in state
	// files written before it was recorded.
	File *leaseFileIdentity `json:"file,omitempty"`
	// LongestLeaseMS: the longest lease, in milliseconds, that a process
	// may have granted from this file and that may not have expired
	// (longest.go); 0 in state files written before it was recorded.
	LongestLeaseMS int64 `json:"longest_lease_ms,omitempty"`
	// PausedUntilBootNS: while a process pauses lease writes after
	// discarding the file, when the pause ends on BootID's boot clock
	// (pause.go); 0 otherwise.
	PausedUntilBootNS int64 `json:"paused_until_boot_ns,omitempty"`
}

func stateFilePath(leaseFile string) string { return leaseFile + ".state" }

// trustLeaseFile decides whether the lease file at path holds every commit
// made to it, given the current boot id. why explains a refusal.
// st is what the state file said (zero when it is absent or unreadable).
func trustLeaseFile(path, bootID string) (trusted bool, why string, st leaseFileState, err error) {
	raw, err := os.ReadFile(stateFilePath(path))
	if errors.Is(err, fs.ErrNotExist) {
		// A new file, or one written by an s3cond that synced every commit.
		return true, "", st, nil
	}
	if err != nil {
		return false, "", st, fmt.Errorf("read %s: %w", stateFilePath(path), err)
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return false, fmt.Sprintf("its state file %s is unreadable (%v)", stateFilePath(path), err), leaseFileState{}, nil
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		// Deleted since a process used it: the leases it held are gone
		// with it, whether or not that process closed it.
		return false, fmt.Sprintf("it is missing, although its state file %s shows it was in use", stateFilePath(path)), st, nil
	}
	// Synced, or the process stopped without closing but the machine did
	// not restart: the kernel still has every commit.
	if !st.Synced && st.BootID != bootID {
		return false, "the process that last used it did not close it, and the machine has restarted since, so its last commits may be lost", st, nil
	}
	if st.File != nil {
		if why := notTheRecordedFile(path, *st.File); why != "" {
			return false, why, st, nil
		}
	}
	return true, "", st, nil
}

// writeLeaseFileState replaces the state file durably: a new file, fsynced,
// renamed over the old one, and the directory fsynced.
func writeLeaseFileState(path string, st leaseFileState) error {
	raw, err := json.Marshal(st)
	if err != nil {
		return err
	}
	final := stateFilePath(path)
	tmp := final + ".tmp"
	if err := writeFileSynced(tmp, raw); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("replace %s: %w", final, err)
	}
	if err := syncDir(filepath.Dir(final)); err != nil {
		return fmt.Errorf("sync the directory of %s: %w", final, err)
	}
	return nil
}

func writeFileSynced(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

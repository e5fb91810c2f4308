package boltstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// bbolt locks the lease file itself, so a second process that finds the
// file deleted (by hand, by a cleanup job) creates a new one and runs
// beside the first, each granting leases from its own file. The lock that
// keeps a second process out is therefore taken on a file of its own
// beside the lease file, which nothing removes: deleting the lease file
// leaves it, and its holder, in place.

func lockFilePath(leaseFile string) string { return leaseFile + ".lock" }

// lockLeaseDir takes the lease file's lock, or fails at once when another
// process holds it. The returned file holds the lock until closed.
func lockLeaseDir(leaseFile string) (*os.File, error) {
	f, err := os.OpenFile(lockFilePath(leaseFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lease lock file %s: %w", lockFilePath(leaseFile), err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("open lease file %s: another process holds it (its lock %s; only one s3cond may use an embedded lease file; use DynamoDB for several)",
				leaseFile, lockFilePath(leaseFile))
		}
		return nil, fmt.Errorf("lock %s: %w", lockFilePath(leaseFile), err)
	}
	return f, nil
}

// ErrLeaseFileCorrupt means the lease file cannot be read: s3cond refuses
// to start on it rather than grant leases from a file it cannot trust.
var ErrLeaseFileCorrupt = errors.New("dynamolease: the lease file is corrupt")

// openBoltChecked proves an existing lease file's structure
// (verifyLeaseFile) and reads every bucket's entries through bbolt before
// it opens the file for writing, so that a corrupt file is
// ErrLeaseFileCorrupt, not a crash. The bbolt walk runs on a read-only open
// that loads no free list: a writable open of a file without a synced free
// list (NoFreelistSync) walks the file on a goroutine of bbolt's own.
func openBoltChecked(path string, opts *bolt.Options) (*bolt.DB, error) {
	if _, err := os.Stat(path); err == nil {
		if err := checkBoltFile(path, opts.Timeout); err != nil {
			return nil, err
		}
	}
	return bolt.Open(path, 0o600, opts)
}

// verifyLeaseFile is the integrity check that comes before any read of the
// lease file through bbolt (pagewalk.go). A missing or empty file passes:
// bbolt creates it.
func verifyLeaseFile(path string) error {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(raw) == 0) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read lease file %s: %w", path, err)
	}
	if err := verifyBoltPages(raw); err != nil {
		return corruptError(path, err)
	}
	return nil
}

// openReadOnlyVerified opens the lease file read-only once its structure is
// proven; every read-only use of the file goes through it.
func openReadOnlyVerified(path string, timeout time.Duration) (*bolt.DB, error) {
	if err := verifyLeaseFile(path); err != nil {
		return nil, err
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: timeout})
	if err != nil {
		if errors.Is(err, bolterrors.ErrInvalid) || errors.Is(err, bolterrors.ErrChecksum) || errors.Is(err, bolterrors.ErrVersionMismatch) {
			return nil, corruptError(path, err)
		}
		return nil, err
	}
	return db, nil
}

func checkBoltFile(path string, timeout time.Duration) (err error) {
	db, err := openReadOnlyVerified(path, timeout)
	if err != nil {
		return err
	}
	defer db.Close()
	// A panic here is one of bbolt's assertions on a file the structural
	// check passed (keys out of order, say): still a corrupt file.
	defer func() {
		if p := recover(); p != nil {
			err = corruptError(path, fmt.Errorf("%v", p))
		}
	}()
	err = db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(_ []byte, b *bolt.Bucket) error {
			return b.ForEach(func([]byte, []byte) error { return nil })
		})
	})
	if err != nil {
		return corruptError(path, err)
	}
	return nil
}

func corruptError(path string, cause error) error {
	return fmt.Errorf("%w: %s: %v; move it aside to start afresh, after waiting lease.timeout × max_clock_skew_rate so that no lease it held is still live",
		ErrLeaseFileCorrupt, path, cause)
}

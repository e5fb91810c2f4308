package boltstore

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/rs/zerolog"
	bolt "go.etcd.io/bbolt"
)

// The embedded lease file is its leases' only record, so s3cond must notice
// when the file at the lease path is no longer the one it wrote: replaced
// (a backup restored, a copy moved over it), truncated, or deleted. Two
// checks do that:
//
//   - while the process runs, every commit first compares the path's device,
//     inode and size with the file it opened (leaseFileWatch): once they
//     differ, the commits of this process go to a file no restart will read,
//     so lease writes are refused (the proxy answers 503) until s3cond is
//     restarted, and the restart waits the lost leases out;
//   - across a stop, the state file records the file's identity: a random
//     id kept inside the file, its device and inode, and the size it had
//     (bbolt files only grow). A file found at start that is not the one
//     recorded, or shorter, is treated as a missing one: discarded, and
//     lease writes refused for the longest lease × skew (durability.go).
//
// Moving the data directory to another disk changes the inode too, and so
// costs one such wait: the price of not trusting a copy that may be older
// than the file it replaced.

// ErrLeaseFileReplaced answers lease writes once the file at the lease path
// is no longer the one this process opened.
var ErrLeaseFileReplaced = errors.New("dynamolease: the lease file was replaced, truncated or deleted while s3cond used it; restart s3cond (conditional writes then wait out the leases it held)")

var (
	metaBucket = []byte("meta")
	fileIDKey  = []byte("file_id")
)

// leaseFileIdentity names one lease file: what the state file records and
// what a process compares against the path.
type leaseFileIdentity struct {
	FileID string `json:"file_id"`
	Device uint64 `json:"device"`
	Inode  uint64 `json:"inode"`
	Size   int64  `json:"size"` // a lower bound: the file only grows
}

type fileStat struct {
	device, inode uint64
	size          int64
}

func statLeaseFile(path string) (fileStat, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStat{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileStat{}, fmt.Errorf("stat %s: no device and inode on this platform", path)
	}
	return fileStat{device: uint64(st.Dev), inode: st.Ino, size: fi.Size()}, nil //nolint:unconvert // Dev's type differs by platform
}

// ensureFileID returns the file's id, creating it in a new file.
func ensureFileID(tx *bolt.Tx) (string, error) {
	meta, err := tx.CreateBucketIfNotExists(metaBucket)
	if err != nil {
		return "", err
	}
	if id := meta.Get(fileIDKey); id != nil {
		return string(id), nil
	}
	id := rand.Text()
	return id, meta.Put(fileIDKey, []byte(id))
}

// readLeaseFileID reads the id of the file at path on a read-only open,
// after the file's integrity check (a corrupt page could otherwise crash
// the process in bbolt). Any failure is returned as an error: the writable
// open that follows reports corruption in its own words.
func readLeaseFileID(path string) (id string, err error) {
	db, err := openReadOnlyVerified(path, boltOpenTimeout)
	if err != nil {
		return "", err
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		if meta := tx.Bucket(metaBucket); meta != nil {
			id = string(meta.Get(fileIDKey))
		}
		return nil
	})
	return id, err
}

// notTheRecordedFile says why the file at path is not the one recorded, or
// "" when it is (or cannot be read: then opening it reports why).
func notTheRecordedFile(path string, recorded leaseFileIdentity) string {
	now, err := statLeaseFile(path)
	if err != nil {
		return ""
	}
	if now.device != recorded.Device || now.inode != recorded.Inode {
		return fmt.Sprintf("it is not the file its state file records (device %d inode %d, now device %d inode %d): replaced while s3cond was stopped",
			recorded.Device, recorded.Inode, now.device, now.inode)
	}
	if now.size < recorded.Size {
		return fmt.Sprintf("it is shorter (%d bytes) than its state file records (%d): truncated while s3cond was stopped", now.size, recorded.Size)
	}
	id, err := readLeaseFileID(path)
	if err != nil {
		return ""
	}
	if id != recorded.FileID {
		return fmt.Sprintf("its file id %q is not the one its state file records (%q): rewritten while s3cond was stopped", id, recorded.FileID)
	}
	return ""
}

// leaseFileWatch notices, before each commit, that the path no longer
// names the file this process opened. Only the group committer's goroutine
// calls check; Close reads it after the committer has stopped.
type leaseFileWatch struct {
	path     string
	opened   fileStat
	lastSize int64
	failed   error
	log      zerolog.Logger
}

func newLeaseFileWatch(path string, log zerolog.Logger) (*leaseFileWatch, error) {
	st, err := statLeaseFile(path)
	if err != nil {
		return nil, err
	}
	return &leaseFileWatch{path: path, opened: st, lastSize: st.size, log: log}, nil
}

func (w *leaseFileWatch) check() error {
	if w.failed != nil {
		return w.failed
	}
	now, err := statLeaseFile(w.path)
	var why string
	switch {
	case errors.Is(err, fs.ErrNotExist):
		why = "deleted"
	case err != nil:
		return fmt.Errorf("lease file %s: %w", w.path, err) // not sticky: may pass
	case now.device != w.opened.device || now.inode != w.opened.inode:
		why = fmt.Sprintf("replaced (device %d inode %d, opened as device %d inode %d)", now.device, now.inode, w.opened.device, w.opened.inode)
	case now.size < w.lastSize:
		why = fmt.Sprintf("truncated (%d bytes, was %d)", now.size, w.lastSize)
	default:
		w.lastSize = now.size
		return nil
	}
	w.failed = fmt.Errorf("%w: %s %s", ErrLeaseFileReplaced, w.path, why)
	w.log.Error().Str("lease_file", w.path).Str("what", why).
		Msg("the embedded lease file is no longer the one s3cond opened: conditional writes get 503 until s3cond is restarted")
	return w.failed
}

// identity is what the state file records for the open file.
func (w *leaseFileWatch) identity(fileID string) *leaseFileIdentity {
	return &leaseFileIdentity{FileID: fileID, Device: w.opened.device, Inode: w.opened.inode, Size: w.lastSize}
}

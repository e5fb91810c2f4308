package boltstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/s3cond/s3cond/dynamolease"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// The embedded lease file belongs to the one s3cond that has it open, so
// operators' tools reach it in two ways: through that process (List on its
// Table, behind the admin listener), or, while no s3cond runs, by
// opening the file themselves (ReadLeaseFile, ReleaseInLeaseFile).

// ErrLeaseFileInUse means a running s3cond has the lease file open: read
// and release its rows through that process (its admin listener), which
// alone can write the file while it runs.
var ErrLeaseFileInUse = errors.New("dynamolease: a running s3cond has the lease file open")

// readLeaseFileTimeout bounds the wait for a running s3cond's lock on the
// lease file: it holds it for as long as it runs, so a longer wait only
// delays the answer.
const readLeaseFileTimeout = 300 * time.Millisecond

// List implements dynamolease.Lister with one read transaction.
func (b *Table) List(ctx context.Context, prefix string) ([]dynamolease.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var rows []dynamolease.Record
	err := b.db.View(func(tx *bolt.Tx) error {
		var err error
		rows, err = listBoltRows(tx, prefix)
		return err
	})
	return rows, err
}

func listBoltRows(tx *bolt.Tx, prefix string) ([]dynamolease.Record, error) {
	bucket := tx.Bucket(leaseBucket)
	if bucket == nil {
		return nil, nil
	}
	var rows []dynamolease.Record
	err := bucket.ForEach(func(k, v []byte) error {
		path, etag, ok := splitBoltKey(k)
		if !ok {
			return fmt.Errorf("lease row key %q is not a length-prefixed path and etag", k)
		}
		if !strings.HasPrefix(path, prefix) {
			return nil
		}
		r, err := decodeBoltRow(path, etag, v)
		if err != nil || r == nil {
			return err
		}
		rows = append(rows, *r)
		return nil
	})
	dynamolease.SortRecords(rows)
	return rows, err
}

// splitBoltKey undoes boltKey.
func splitBoltKey(k []byte) (path, etag string, ok bool) {
	n, width := binary.Uvarint(k)
	if width <= 0 || n > uint64(len(k)-width) {
		return "", "", false
	}
	rest := k[width:]
	return string(rest[:n]), string(rest[n:]), true
}

// ReadLeaseFile lists the rows of the lease file at leaseFile, as List
// does, on a read-only open that writes nothing. It returns an error
// wrapping ErrLeaseFileInUse when a running s3cond has the file open, and
// one wrapping fs.ErrNotExist when there is no file.
func ReadLeaseFile(leaseFile, prefix string) (rows []dynamolease.Record, err error) {
	if _, err := os.Stat(leaseFile); err != nil {
		return nil, fmt.Errorf("lease file %s: %w", leaseFile, err)
	}
	defer func() {
		if p := recover(); p != nil { // bbolt panics on corrupt pages
			rows, err = nil, corruptError(leaseFile, fmt.Errorf("%v", p))
		}
	}()
	db, err := bolt.Open(leaseFile, 0o600, &bolt.Options{ReadOnly: true, Timeout: readLeaseFileTimeout})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("%w: %s", ErrLeaseFileInUse, leaseFile)
	}
	if err != nil {
		return nil, fmt.Errorf("open lease file %s: %w", leaseFile, err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		var err error
		rows, err = listBoltRows(tx, prefix)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read lease file %s: %w", leaseFile, err)
	}
	return rows, nil
}

// ReleaseInLeaseFile is dynamolease.ReleaseRow on the lease file at leaseFile while no
// s3cond runs on it: it takes the file's lock for the length of the write,
// so none can start meanwhile (ErrLeaseFileInUse when one runs), and writes
// one synced commit. It refuses a file the next s3cond would not trust
// (after a machine restart, or replaced while stopped): that s3cond
// discards it and waits out every lease it held, so there is nothing to
// release, and writing to it would hide why it must.
func ReleaseInLeaseFile(ctx context.Context, leaseFile, path, etag string, generation uint64) (*dynamolease.Record, error) {
	lock, err := tryLockLeaseFile(leaseFile)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	if bootID, err := readBootID(); err == nil {
		trusted, why, _, err := trustLeaseFile(leaseFile, bootID)
		if err != nil {
			return nil, fmt.Errorf("lease file %s: %w", leaseFile, err)
		}
		if !trusted {
			return nil, fmt.Errorf("lease file %s will not be trusted by the next s3cond (%s): it starts afresh and waits out every lease the file held, so no row of it can be released", leaseFile, why)
		}
	}
	if _, err := os.Stat(leaseFile); err != nil {
		return nil, fmt.Errorf("lease file %s: %w", leaseFile, err)
	}
	db, err := openBoltChecked(leaseFile, &bolt.Options{Timeout: boltOpenTimeout, NoFreelistSync: true})
	if err != nil {
		return nil, fmt.Errorf("open lease file %s: %w", leaseFile, err)
	}
	defer db.Close()
	return dynamolease.ReleaseRow(ctx, &lockedLeaseFile{db: db}, path, etag, generation)
}

// tryLockLeaseFile takes the lock s3cond holds while it runs
// (lockLeaseDir), or fails at once with ErrLeaseFileInUse.
func tryLockLeaseFile(leaseFile string) (*os.File, error) {
	f, err := os.OpenFile(lockFilePath(leaseFile), os.O_RDWR, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		// No s3cond ever opened the file (it creates the lock first).
		return nil, fmt.Errorf("lease file %s: %w", leaseFile, err)
	}
	if err != nil {
		return nil, fmt.Errorf("open lease lock file %s: %w", lockFilePath(leaseFile), err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s (its lock %s is held)", ErrLeaseFileInUse, leaseFile, lockFilePath(leaseFile))
		}
		return nil, fmt.Errorf("lock %s: %w", lockFilePath(leaseFile), err)
	}
	return f, nil
}

// lockedLeaseFile is the Table dynamolease.ReleaseRow needs, on a lease file this
// process has locked: each call is one bbolt transaction, synced.
type lockedLeaseFile struct{ db *bolt.DB }

func (l *lockedLeaseFile) Get(ctx context.Context, path, etag string) (*dynamolease.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var r *dynamolease.Record
	err := l.db.View(func(tx *bolt.Tx) error {
		bucket := tx.Bucket(leaseBucket)
		if bucket == nil {
			return nil
		}
		var err error
		r, err = decodeBoltRow(path, etag, bucket.Get(boltKey(path, etag)))
		return err
	})
	return r, err
}

func (l *lockedLeaseFile) Replace(ctx context.Context, r dynamolease.Record, seen uint64) (*dynamolease.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var current *dynamolease.Record
	err := l.db.Update(func(tx *bolt.Tx) error {
		bucket := tx.Bucket(leaseBucket)
		if bucket == nil {
			return dynamolease.ErrConditionFailed
		}
		k := boltKey(r.Path, r.ETag)
		row, err := decodeBoltRow(r.Path, r.ETag, bucket.Get(k))
		if err != nil {
			return err
		}
		if row == nil || row.Generation != seen {
			current = row
			return dynamolease.ErrConditionFailed
		}
		return putBoltRow(bucket, k, r)
	})
	return current, err
}

// Create is never called by dynamolease.ReleaseRow; a lease file is written by s3cond.
func (l *lockedLeaseFile) Create(context.Context, dynamolease.Record) (*dynamolease.Record, error) {
	return nil, errors.New("dynamolease: the locked lease file only releases rows")
}

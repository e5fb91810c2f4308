package boltstore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/rs/zerolog"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/internal/rowcodec"
)

// Table is a dynamolease.Table in a bbolt file: the embedded lease store for a
// single s3cond process. Leases survive a restart of the process, so a process
// that comes back honours the leases it held before it stopped; after a restart
// of the machine, see durability.go. bbolt locks the file, so only one
// process can use it; a second one gets an error after a second.
type Table struct {
	db      *bolt.DB
	path    string
	commits *groupCommitter
	// unsynced: commits are not fsynced (see durability.go); Close
	// syncs the file and records that it did.
	unsynced bool
	// writableAt: lease writes are refused before it, when the file was
	// discarded after a machine restart. Zero when they never were.
	writableAt time.Time
	discarded  string   // why the file was discarded, for the log
	lock       *os.File // holds the lease file's lock (guard.go)
	fileID     string   // the random id kept inside the file (identity.go)
	bootID     string   // this boot's id, when the state file is kept
	// longestLease is what the state file records as the longest lease
	// that may live in the file (longest.go).
	longestLease time.Duration
	// pausedUntilBoot is when the pause ends on the boot clock, for the
	// state file (pause.go); 0 without a pause.
	pausedUntilBoot int64
	watch           *leaseFileWatch

	closeOnce sync.Once
	closeErr  error
}

var leaseBucket = []byte("leases")

// boltOpenTimeout bounds how long Open waits for another process's lock.
const boltOpenTimeout = time.Second

// ErrLeaseFileRecovering answers lease writes while the embedded store waits
// out leases a previous process may have held before the machine restarted.
var ErrLeaseFileRecovering = errors.New("dynamolease: the lease file was discarded after the machine restarted; lease writes resume once any lease held before the restart has expired")

// Options tune Open.
type Options struct {
	// Lease is the options of the dynamolease.Committer that uses the table.
	// When the file cannot be trusted after a machine restart, lease writes are
	// refused for Lease.LongestTakeoverWait(): the longest lease the lost file
	// may have held, sized ones included, × Lease.MaxClockSkewRate.
	Lease dynamolease.Options
	// Log gets the one error logged when the lease file is found replaced,
	// truncated or deleted under the running process (identity.go).
	Log zerolog.Logger
	// bootID reads the machine's boot id; nil reads the kernel's. For tests.
	bootID func() (string, error)
}

// boltRow is a row as stored, with the units a DynamoDB row has.
type boltRow struct {
	Generation uint64 `json:"generation"`
	TimeoutMS  int64  `json:"timeout"`
	TTL        int64  `json:"ttl"` // epoch seconds; 0 when unset
	Owner      string `json:"owner,omitempty"`
	Released   bool   `json:"released,omitempty"`
	KeyState   string `json:"key_state,omitempty"`
	Receipt    string `json:"receipt,omitempty"`
}

// Open opens or creates the lease file at path.
func Open(path string, opts Options) (*Table, error) {
	readBoot := opts.bootID
	if readBoot == nil {
		readBoot = readBootID
	}
	lock, err := lockLeaseDir(path)
	if err != nil {
		return nil, err
	}
	t := &Table{path: path, lock: lock, longestLease: opts.Lease.LongestLease()}
	opened := false
	defer func() {
		if !opened {
			_ = lock.Close()
		}
	}()
	if bootID, err := readBoot(); err == nil {
		t.bootID = bootID
		if err := t.distrustAfterRestart(bootID, opts.Lease); err != nil {
			return nil, err
		}
		// From here on commits may sit in the page cache only.
		if err := writeLeaseFileState(path, t.stateWithRecord(leaseFileState{BootID: bootID})); err != nil {
			return nil, fmt.Errorf("lease file %s: %w", path, err)
		}
		t.unsynced = true
	}
	// NoFreelistSync: every lease write is a commit, and the free page list
	// is one of the three or four pages a small commit writes (BenchmarkHotKey
	// bolt: 917 -> 1060 ops/s). bbolt rebuilds the list when it opens the
	// file, which is small: lease rows only.
	db, err := openBoltChecked(path, &bolt.Options{Timeout: boltOpenTimeout, NoFreelistSync: true, NoSync: t.unsynced})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("open lease file %s: another process holds it (only one s3cond may use an embedded lease file; use DynamoDB for several): %w", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("open lease file %s: %w", path, err)
	}
	t.db = db
	if err := t.prepare(opts.Lease, opts.Log); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("prepare lease file %s: %w", path, err)
	}
	t.commits = startGroupCommitter(db, lazyCommitDelay, t.watch.check)
	opened = true
	return t, nil
}

// prepare creates the lease bucket and the file's id, starts watching the
// path, and records the file's identity and the longest lease that may
// live in it in the state file.
func (b *Table) prepare(lease dynamolease.Options, log zerolog.Logger) error {
	if err := b.db.Update(func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucketIfNotExists(leaseBucket); err != nil {
			return err
		}
		var err error
		b.fileID, err = ensureFileID(tx)
		return err
	}); err != nil {
		return err
	}
	watch, err := newLeaseFileWatch(b.path, log)
	if err != nil {
		return err
	}
	b.watch = watch
	if !b.unsynced {
		return nil // no state file: every commit is synced
	}
	if b.discarded == "" {
		inRows, err := longestLeaseInRows(b.db)
		if err != nil {
			return err
		}
		b.longestLease = max(lease.LongestLease(), inRows)
	}
	return writeLeaseFileState(b.path, b.stateWithRecord(leaseFileState{BootID: b.bootID, File: watch.identity(b.fileID)}))
}

// distrustAfterRestart removes the lease file if it may have lost commits
// in a restart of the machine, and then refuses lease writes until any
// lease held before the restart has expired.
func (b *Table) distrustAfterRestart(bootID string, lease dynamolease.Options) error {
	trusted, why, st, err := trustLeaseFile(b.path, bootID)
	if err != nil {
		return fmt.Errorf("lease file %s: %w", b.path, err)
	}
	// Until prepare reads the rows, the old record stands: it is the
	// first thing this process writes to the state file.
	b.longestLease = max(b.longestLease, recordedLongestLease(st))
	if trusted {
		b.resumePause(st, bootID, lease)
		return nil
	}
	if err := os.Remove(b.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("lease file %s: remove the untrusted file: %w", b.path, err)
	}
	b.startPause(why, lease.LongestTakeoverWaitBeyond(recordedLongestLease(st)))
	return nil
}

// Discarded reports whether Open found the lease file untrustworthy
// (missing, replaced, or possibly short of commits after a machine
// restart) and started a new one, why, and until when lease writes are
// refused. For the log.
func (b *Table) Discarded() (why string, writableAt time.Time, discarded bool) {
	return b.discarded, b.writableAt, b.discarded != ""
}

// refuseWhileRecovering returns a dynamolease.Refusal wrapping
// ErrLeaseFileRecovering while the table waits out leases from before a machine
// restart.
func (b *Table) refuseWhileRecovering() error {
	if b.writableAt.IsZero() {
		return nil
	}
	if left := time.Until(b.writableAt); left > 0 {
		return &dynamolease.Refusal{Kind: dynamolease.ErrUnavailable, Err: fmt.Errorf("%w (%s left)", ErrLeaseFileRecovering, left.Round(time.Second)),
			Reason: "Conditional writes are paused after a restart of the machine until any lease held before it has expired; retry shortly."}
	}
	return nil
}

// Close closes the file, synced, and records that it is. Closing twice
// returns the first Close's error.
func (b *Table) Close() error {
	b.closeOnce.Do(func() { b.closeErr = b.close() })
	return b.closeErr
}

func (b *Table) close() error {
	b.commits.close()
	var syncErr error
	if b.unsynced {
		syncErr = b.db.Sync()
	}
	if err := errors.Join(syncErr, b.db.Close(), b.lock.Close()); err != nil {
		return fmt.Errorf("close lease file %s: %w", b.path, err)
	}
	if b.unsynced {
		// The identity of the file this process wrote, even if the path
		// names another by now: the next start then finds it replaced.
		return writeLeaseFileState(b.path, b.stateWithRecord(leaseFileState{Synced: true, File: b.watch.identity(b.fileID)}))
	}
	return nil
}

// Create implements dynamolease.Table. A row whose TTL has passed counts as
// absent, as if DynamoDB's TTL sweep had removed it.
func (b *Table) Create(ctx context.Context, r dynamolease.Record) (*dynamolease.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := b.refuseWhileRecovering(); err != nil {
		return nil, err
	}
	var existing *dynamolease.Record
	err := b.commits.write(ctx, func(bucket *bolt.Bucket) error {
		existing = nil
		k := boltKey(r.Path, r.ETag)
		if current, err := decodeBoltRow(r.Path, r.ETag, bucket.Get(k)); err != nil {
			return err
		} else if current != nil && !expired(current, time.Now()) {
			existing = current
			return dynamolease.ErrConditionFailed
		}
		return putBoltRow(bucket, k, r)
	}, false)
	return existing, err
}

// Replace implements dynamolease.Table.
func (b *Table) Replace(ctx context.Context, r dynamolease.Record, seen uint64) (*dynamolease.Record, error) {
	return b.replace(ctx, r, seen, false)
}

// ReplaceLazily implements dynamolease.LazyReplacer: a release that no local
// goroutine waits for may wait briefly to share the next acquire's commit (see
// lazyCommitDelay).
func (b *Table) ReplaceLazily(ctx context.Context, r dynamolease.Record, seen uint64) (*dynamolease.Record, error) {
	return b.replace(ctx, r, seen, true)
}

func (b *Table) replace(ctx context.Context, r dynamolease.Record, seen uint64, lazy bool) (*dynamolease.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := b.refuseWhileRecovering(); err != nil {
		return nil, err
	}
	var current *dynamolease.Record
	err := b.commits.write(ctx, func(bucket *bolt.Bucket) error {
		current = nil
		k := boltKey(r.Path, r.ETag)
		row, err := decodeBoltRow(r.Path, r.ETag, bucket.Get(k))
		if err != nil {
			return err
		}
		if row == nil || row.Generation != seen || !r.Fence.Matches(*row) {
			current = row
			return dynamolease.ErrConditionFailed
		}
		return putBoltRow(bucket, k, r)
	}, lazy)
	return current, err
}

// Get implements dynamolease.Table.
func (b *Table) Get(ctx context.Context, path, etag string) (*dynamolease.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var r *dynamolease.Record
	err := b.db.View(func(tx *bolt.Tx) error {
		var err error
		r, err = decodeBoltRow(path, etag, tx.Bucket(leaseBucket).Get(boltKey(path, etag)))
		return err
	})
	return r, err
}

// Sweep deletes rows whose TTL passed before now, as DynamoDB's TTL does, so
// the file does not grow without bound. Call it now and then.
func (b *Table) Sweep(ctx context.Context, now time.Time) (deleted int, err error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	err = b.db.Update(func(tx *bolt.Tx) error {
		bucket := tx.Bucket(leaseBucket)
		var doomed [][]byte
		err := bucket.ForEach(func(k, v []byte) error {
			// An unreadable row has no TTL and stays: it is taken over,
			// and so rewritten, by the next lease on its key.
			row, _ := decodeBoltRow("", "", v)
			if expired(row, now) {
				// Keys are only valid inside the transaction; deleting
				// while iterating would skip rows.
				doomed = append(doomed, append([]byte(nil), k...))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range doomed {
			if err := bucket.Delete(k); err != nil {
				return err
			}
		}
		deleted = len(doomed)
		return nil
	})
	return deleted, err
}

func expired(r *dynamolease.Record, now time.Time) bool { return !r.TTL.IsZero() && r.TTL.Before(now) }

// boltKey length-prefixes the path so no path/etag pair can collide with
// another.
func boltKey(path, etag string) []byte {
	k := binary.AppendUvarint(nil, uint64(len(path)))
	k = append(k, path...)
	return append(k, etag...)
}

func putBoltRow(bucket *bolt.Bucket, k []byte, r dynamolease.Record) error {
	r = dynamolease.Normalise(r)
	row := boltRow{
		Generation: r.Generation,
		TimeoutMS:  r.Timeout.Milliseconds(),
		Owner:      r.Owner,
		Released:   r.Released,
		KeyState:   rowcodec.EncodeKeyState(r.KeyState),
		Receipt:    r.Receipt,
	}
	if !r.TTL.IsZero() {
		row.TTL = r.TTL.Unix()
	}
	v, err := json.Marshal(row)
	if err != nil {
		return fmt.Errorf("encode lease row: %w", err)
	}
	return bucket.Put(k, v)
}

func decodeBoltRow(path, etag string, v []byte) (*dynamolease.Record, error) {
	if v == nil {
		return nil, nil
	}
	r := &dynamolease.Record{Path: path, ETag: etag}
	var problems rowcodec.Problems
	rowcodec.DecodeJSON(v, r, true, &problems)
	r.Unreadable = problems.String()
	return r, nil
}

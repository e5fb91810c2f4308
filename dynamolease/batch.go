package dynamolease

import (
	"context"
	"errors"
)

// BatchTable is a Table that can write many rows in one request: DynamoDB
// in one TransactWriteItems (at most 100 items), etcd in one transaction,
// bbolt in one commit. A Committer uses it, where its Table has it, to take
// and release the leases of a DeleteObjects in a few round trips
// (AcquireMany, ReleaseAll); every row keeps its own condition, exactly
// as Create and Replace state it.
type BatchTable interface {
	Table
	// MaxBatch is how many rows one CreateInOrder or ReplaceEach may carry.
	MaxBatch() int
	// CreateInOrder creates rs[0], rs[1], … in that order, each on Create's
	// condition (no row (Path, ETag) yet), and stops before the first row
	// that exists: rs[:created] were written, the rest were not. When
	// created < len(rs) and err is nil, existing is the row found for
	// rs[created] (nil when it was not read). On an error, rows from
	// rs[created] on may or may not have been written. The rows name
	// distinct keys.
	CreateInOrder(ctx context.Context, rs []Record) (created int, existing *Record, err error)
	// ReplaceEach writes each rs[i] on Replace's condition (the row exists
	// at generation seen[i]): written[i] says whether it was, and current[i]
	// is the row that failed the condition (nil when absent or not read);
	// both have len(rs) entries, also with an error, when the rows not
	// reported written may or may not have been.
	// The rows name distinct keys.
	ReplaceEach(ctx context.Context, rs []Record, seen []uint64) (written []bool, current []*Record, err error)
}

// LazyBatchReplacer is a BatchTable that can hold back a ReplaceEach nobody
// waits for, as LazyReplacer does for one row (the embedded bolt table). A
// BatchTable that wraps another should implement it with ReplaceEachLazily,
// so the hint reaches the table beneath.
type LazyBatchReplacer interface {
	// ReplaceEachLazily is ReplaceEach for writes no goroutine waits for:
	// it may wait briefly for company before it commits.
	ReplaceEachLazily(ctx context.Context, rs []Record, seen []uint64) (written []bool, current []*Record, err error)
}

// ReplaceEachLazily is t's ReplaceEachLazily if t has one, else its
// ReplaceEach.
func ReplaceEachLazily(ctx context.Context, t BatchTable, rs []Record, seen []uint64) ([]bool, []*Record, error) {
	if lazy, ok := t.(LazyBatchReplacer); ok {
		return lazy.ReplaceEachLazily(ctx, rs, seen)
	}
	return t.ReplaceEach(ctx, rs, seen)
}

// WroteIt tells whether a row that failed a batch's condition is the one
// the batch tried to write (a request retried after its first attempt
// landed fails against our own row), so a store's BatchTable reports it
// written, as the Committer does for a single write.
func WroteIt(current *Record, attempted Record) bool { return wroteIt(current, attempted) }

// ReplaceUndecided replaces, one row at a time, the rows of a ReplaceEach
// that its transactions left undecided (neither written nor answered with
// the row as it is): a batch store's fallback once a transaction could not
// say which of its rows failed, or the store refused transactions.
func ReplaceUndecided(ctx context.Context, t Table, rs []Record, seen []uint64, written []bool, current []*Record) error {
	for i := range rs {
		if written[i] || current[i] != nil {
			continue
		}
		row, err := t.Replace(ctx, rs[i], seen[i])
		switch {
		case err == nil || WroteIt(row, rs[i]):
			written[i] = true
		case errors.Is(err, ErrConditionFailed):
			current[i] = row
		default:
			return err
		}
	}
	return nil
}

// CreateInOrderOneByOne is CreateInOrder one Create at a time: a batch
// store's fallback where its store has no transactions (dynalite) or a
// transaction could not say which row failed. It stops at the first row
// that exists, as CreateInOrder does.
func CreateInOrderOneByOne(ctx context.Context, t Table, rs []Record) (int, *Record, error) {
	for i, r := range rs {
		existing, err := t.Create(ctx, r)
		if errors.Is(err, ErrConditionFailed) {
			if WroteIt(existing, r) {
				continue
			}
			return i, existing, nil
		}
		if err != nil {
			return i, nil, err
		}
	}
	return len(rs), nil, nil
}

package dynamostore

import (
	"errors"
	"fmt"
	"strings"

	"github.com/s3cond/s3cond/dynamolease"
)

// KeyFormat says how a Table names a lease row (its partition key).
type KeyFormat string

const (
	// KeyFormatBucketKey names a row "<bucket>/<key>", so one table serves
	// any number of buckets. Only s3cond writes rows so.
	KeyFormatBucketKey KeyFormat = "bucket-key"
	// KeyFormatArrowRS names a row by the object key alone, as Apache
	// arrow-rs object_store's DynamoCommit does (its Path is relative to
	// the bucket): s3cond and arrow-rs clients of that one bucket then
	// contend on the same rows. A table so keyed serves one bucket.
	KeyFormatArrowRS KeyFormat = "arrow-rs"
)

// ErrOtherBucket is returned for a lease write on a bucket that an arrow-rs
// keyed table does not serve: its rows carry no bucket, so leases of two
// buckets would collide.
var ErrOtherBucket = errors.New("dynamolease: the lease table is keyed in arrow-rs format for another bucket")

// WithArrowRSKeys names rows as arrow-rs object_store's DynamoCommit does,
// for the one bucket it serves: the lease path "<bucket>/<key>" becomes the
// row key "<key>". Writes of any other bucket's leases fail with
// ErrOtherBucket.
func WithArrowRSKeys(bucket string) Option {
	return func(t *Table) { t.arrowRSBucket = bucket }
}

// rowPath is the partition key of the lease on path; ok is false when the
// table does not serve path's bucket.
func (t *Table) rowPath(path string) (row string, ok bool) {
	if t.arrowRSBucket == "" {
		return path, true
	}
	key, found := strings.CutPrefix(path, t.arrowRSBucket+"/")
	if !found || key == "" {
		return path, false
	}
	return key, true
}

// writablePath is rowPath for a write: another bucket's lease is refused, for
// good (dynamolease.ErrUnsupported): the client is told so rather than to
// retry.
func (t *Table) writablePath(path string) (string, error) {
	row, ok := t.rowPath(path)
	if !ok {
		return "", &dynamolease.Refusal{Kind: dynamolease.ErrUnsupported, Err: fmt.Errorf("%w: lease %q (the table serves bucket %q)", ErrOtherBucket, path, t.arrowRSBucket),
			Reason: "Conditional writes on this bucket are not supported: the lease table is keyed in arrow-rs format for one other bucket."}
	}
	return row, nil
}

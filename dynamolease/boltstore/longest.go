package boltstore

import (
	"encoding/json"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/s3cond/s3cond/dynamolease"
)

// The pause after discarding the lease file (durability.go) stands for
// rows nobody can read any more, so it must cover the longest lease any of
// them may have carried. lease.max_sized_timeout bounds the leases this
// process grants, but it is configuration: an operator who lowers it
// between runs would shorten the pause below a lease granted under the old
// cap (a copy the store still runs). So the state file records the longest
// lease that may live in the file, fsynced before this process grants any
// lease, and the pause is max(timeout, max_sized_timeout, recorded) × skew.
//
// What is recorded is this process's cap (every lease it may grant), not
// each lease as it is granted: the cap is known at start, so the record
// costs no fsync on the write path. At each start the record becomes
//
//   - the cap, and the longest lease in the file's rows, when the file is
//     trusted: a longer lease granted by an earlier run under a higher cap
//     is one of its rows (the page cache holds every commit of this boot);
//   - the cap, and the old record, when the file is discarded: the lost
//     rows may still hold leases as long as the old record, until the
//     pause has passed.
//
// So a lowered cap takes effect in the record once no row of the file
// carries a longer lease (rows are swept at their TTL, which is longer
// than twice the takeover wait).

// recordedLongestLease is the longest lease a state file recorded.
func recordedLongestLease(st leaseFileState) time.Duration {
	return time.Duration(st.LongestLeaseMS) * time.Millisecond
}

// longestLeaseInRows is the longest lease timeout among the file's rows;
// rows it cannot decode count for nothing (a reader treats them as leases
// of the reader's own timeout, which the cap covers).
func longestLeaseInRows(db *bolt.DB) (time.Duration, error) {
	var longest time.Duration
	err := db.View(func(tx *bolt.Tx) error {
		bucket := tx.Bucket(leaseBucket)
		if bucket == nil {
			return nil
		}
		return bucket.ForEach(func(_, v []byte) error {
			var row boltRow
			if json.Unmarshal(v, &row) == nil {
				longest = max(longest, min(time.Duration(row.TimeoutMS)*time.Millisecond, dynamolease.MaxSizedTimeout))
			}
			return nil
		})
	})
	return longest, err
}

// stateWithRecord is st with the table's record of the longest lease.
// and the end of its pause, if one is on (pause.go), with the boot it
// is counted on.
func (b *Table) stateWithRecord(st leaseFileState) leaseFileState {
	st.LongestLeaseMS = b.longestLease.Milliseconds()
	if st.PausedUntilBootNS = b.pauseEndToRecord(); st.PausedUntilBootNS != 0 {
		st.BootID = b.bootID
	}
	return st
}

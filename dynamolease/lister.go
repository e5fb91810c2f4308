package dynamolease

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Lister is what operators' tools (`s3cond leases`) need of a Table beyond
// the protocol: every row at once. Each of the package's tables implements
// it; a wrapper that embeds a Table does not, unless it says so.
type Lister interface {
	// List returns every row whose path starts with prefix (all rows for
	// ""), sorted by path and etag, rows past their TTL included: the
	// table keeps them until its sweep, and some tables (DynamoDB) still
	// make contenders wait on them. The reads need not be one snapshot.
	List(ctx context.Context, prefix string) ([]Record, error)
}

// ErrReleaseGeneration is what ReleaseRow returns when the row is no longer
// at the generation the operator saw: its holder renewed it, or someone took
// it over, since. Nothing was written.
var ErrReleaseGeneration = errors.New("dynamolease: the lease row is not at the generation given")

// ErrNoLeaseRow is what ReleaseRow returns for a row that does not exist.
var ErrNoLeaseRow = errors.New("dynamolease: no such lease row")

// ReleaseRow marks the row (path, etag) released for an operator who knows
// its holder is dead, so the next conditional write on the key takes it
// over at once instead of waiting out timeout × max clock skew rate.
//
// The write is the protocol's own conditional replace: it lands only if
// the row is still at generation, so a lease renewed or taken over since
// the operator looked is never freed (ErrReleaseGeneration, with the row as
// it is). It writes generation+1, released, keeping the owner: a holder
// that was alive after all finds its next renewal or release refused and
// counts its lease lost, rather than renewing a released row back into a
// held one unaware. A row already released is left as it is.
func ReleaseRow(ctx context.Context, t Table, path, etag string, generation uint64) (*Record, error) {
	row, err := t.Get(ctx, path, etag)
	if err != nil {
		return nil, fmt.Errorf("read lease %q (etag %s): %w", path, etag, err)
	}
	if row == nil {
		return nil, fmt.Errorf("%w: %q (etag %s)", ErrNoLeaseRow, path, etag)
	}
	if row.Generation != generation {
		return row, fmt.Errorf("%w: %q (etag %s) is at generation %d, not %d", ErrReleaseGeneration, path, etag, row.Generation, generation)
	}
	if row.Released {
		return row, nil
	}
	released := *row
	released.Generation = generation + 1
	released.Released = true
	released.Unreadable = ""
	// The row as read, not any row at its generation (fence.go).
	released.Fence = FenceOf(row)
	current, err := t.Replace(ctx, released, generation)
	switch {
	case err == nil:
		return &released, nil
	case errors.Is(err, ErrConditionFailed):
		if current == nil {
			return nil, fmt.Errorf("%w: %q (etag %s) vanished", ErrNoLeaseRow, path, etag)
		}
		return current, fmt.Errorf("%w: %q (etag %s) moved to generation %d while being released", ErrReleaseGeneration, path, etag, current.Generation)
	default:
		return nil, fmt.Errorf("release lease %q (etag %s): %w", path, etag, err)
	}
}

// SortRecords orders rows by path, then etag, as List promises.
func SortRecords(rows []Record) {
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Path != rows[j].Path {
			return rows[i].Path < rows[j].Path
		}
		return rows[i].ETag < rows[j].ETag
	})
}

// MatchingPrefix keeps the rows whose path starts with prefix.
func MatchingPrefix(rows []Record, prefix string) []Record {
	kept := rows[:0]
	for _, r := range rows {
		if strings.HasPrefix(r.Path, prefix) {
			kept = append(kept, r)
		}
	}
	return kept
}

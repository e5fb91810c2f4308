package dynamolease

import (
	"context"
	"errors"
	"strings"
)

// PageLister reads a table's rows a bounded page at a time, for the admin
// listener's GET /leases: a request reads at most one page from the
// store, never the whole table.
type PageLister interface {
	// ListPage returns at most limit rows whose path starts with prefix,
	// from just after the position after ("" for the first page), and the
	// position of the next page ("" when there is none). A page may hold
	// fewer rows than limit (even none) while a next page exists: a store
	// that filters after reading (DynamoDB) counts the rows it read.
	// Pages are in the store's order, not necessarily sorted by path.
	// after comes from whoever asks: a position that is not one of the
	// table's is ErrBadPosition.
	ListPage(ctx context.Context, prefix, after string, limit int) (rows []Record, next string, err error)
}

// ErrBadPosition is ListPage's error for an after it never returned.
var ErrBadPosition = errors.New("dynamolease: not a listing position of this table")

// RowPosition is a position for a row sorted by path then etag: the two
// joined by a NUL byte, which neither holds.
func RowPosition(path, etag string) string { return path + "\x00" + etag }

// SplitRowPosition undoes RowPosition.
func SplitRowPosition(position string) (path, etag string, ok bool) {
	return strings.Cut(position, "\x00")
}

// ListPage implements PageLister over the rows sorted by path and etag.
func (m *MemTable) ListPage(ctx context.Context, prefix, after string, limit int) ([]Record, string, error) {
	rows, err := m.List(ctx, prefix)
	if err != nil {
		return nil, "", err
	}
	return pageOfSorted(rows, after, limit)
}

// pageOfSorted is the page after `after` of rows sorted by path and etag.
func pageOfSorted(rows []Record, after string, limit int) ([]Record, string, error) {
	start := 0
	if after != "" {
		path, etag, ok := SplitRowPosition(after)
		if !ok {
			return nil, "", ErrBadPosition
		}
		for start < len(rows) && RowPosition(rows[start].Path, rows[start].ETag) <= RowPosition(path, etag) {
			start++
		}
	}
	end := min(start+limit, len(rows))
	page := rows[start:end]
	if end == len(rows) || len(page) == 0 {
		return page, "", nil
	}
	last := page[len(page)-1]
	return page, RowPosition(last.Path, last.ETag), nil
}

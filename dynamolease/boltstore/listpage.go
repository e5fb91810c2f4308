package boltstore

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/s3cond/s3cond/dynamolease"

	bolt "go.etcd.io/bbolt"
)

// pageVisits bounds the keys one page steps through per row it may
// return: keys are length-prefixed, so a path prefix selects no key range
// and rows of other prefixes are stepped over.
const pageVisits = 4

// ListPage implements dynamolease.PageLister with a cursor. A position is
// the bolt key of the last row visited; a page visits at most
// limit × pageVisits keys.
func (b *Table) ListPage(ctx context.Context, prefix, after string, limit int) ([]dynamolease.Record, string, error) {
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	if _, _, ok := splitBoltKey([]byte(after)); after != "" && !ok {
		return nil, "", dynamolease.ErrBadPosition
	}
	var rows []dynamolease.Record
	var next string
	err := b.db.View(func(tx *bolt.Tx) error {
		bucket := tx.Bucket(leaseBucket)
		if bucket == nil {
			return nil
		}
		c := bucket.Cursor()
		k, v := c.First()
		if after != "" {
			if k, v = c.Seek([]byte(after)); k != nil && bytes.Equal(k, []byte(after)) {
				k, v = c.Next()
			}
		}
		var last []byte
		for visited := 0; k != nil; k, v = c.Next() {
			if len(rows) == limit || visited == limit*pageVisits {
				next = string(last)
				return nil
			}
			visited++
			last = k
			path, etag, ok := splitBoltKey(k)
			if !ok {
				return fmt.Errorf("lease row key %q is not a length-prefixed path and etag", k)
			}
			if !strings.HasPrefix(path, prefix) {
				continue
			}
			r, err := decodeBoltRow(path, etag, v)
			if err != nil {
				return err
			}
			if r != nil {
				rows = append(rows, *r)
			}
		}
		return nil
	})
	return rows, next, err
}

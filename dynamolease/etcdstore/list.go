package etcdstore

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/s3cond/s3cond/dynamolease"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// etcdListPage is how many rows one range request of List reads, so a large
// table is read in bounded responses.
const etcdListPage = 500

// List implements dynamolease.Lister with linearizable range reads of the keys under
// the table's prefix, a page at a time.
func (t *Table) List(ctx context.Context, prefix string) ([]dynamolease.Record, error) {
	// url.PathEscape maps each byte on its own, so the escaped prefix is a
	// prefix of every escaped path that starts with prefix.
	start := t.prefix + url.PathEscape(prefix)
	end := clientv3.GetPrefixRangeEnd(start)
	var rows []dynamolease.Record
	for {
		callCtx, cancel := t.callContext(ctx)
		resp, err := t.client.Get(callCtx, start, clientv3.WithRange(end), clientv3.WithLimit(etcdListPage),
			clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
		cancel()
		if err != nil {
			return nil, fmt.Errorf("etcd list leases under %q: %w", start, err)
		}
		for _, kv := range resp.Kvs {
			path, etag, ok := t.splitKey(string(kv.Key))
			if !ok {
				continue // not a lease row (a key someone else put under the prefix)
			}
			r, err := decodeEtcdRow(kv.Value, path, etag)
			if err != nil {
				return nil, err
			}
			rows = append(rows, *r)
		}
		if !resp.More || len(resp.Kvs) == 0 {
			break
		}
		start = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
	rows = dynamolease.MatchingPrefix(rows, prefix)
	dynamolease.SortRecords(rows)
	return rows, nil
}

// splitKey undoes Key.
func (t *Table) splitKey(key string) (path, etag string, ok bool) {
	rest, found := strings.CutPrefix(key, t.prefix)
	if !found {
		return "", "", false
	}
	escapedPath, escapedETag, found := strings.Cut(rest, "/")
	if !found {
		return "", "", false
	}
	path, err := url.PathUnescape(escapedPath)
	if err != nil {
		return "", "", false
	}
	etag, err = url.PathUnescape(escapedETag)
	if err != nil {
		return "", "", false
	}
	return path, etag, true
}

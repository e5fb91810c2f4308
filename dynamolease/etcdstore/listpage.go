package etcdstore

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/s3cond/s3cond/dynamolease"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// ListPage implements dynamolease.PageLister with one linearizable range
// read of at most limit keys under the prefix; a position is the last
// key read.
func (t *Table) ListPage(ctx context.Context, prefix, after string, limit int) ([]dynamolease.Record, string, error) {
	start := t.prefix + url.PathEscape(prefix)
	end := clientv3.GetPrefixRangeEnd(start)
	from := start
	if after != "" {
		if !strings.HasPrefix(after, start) {
			return nil, "", dynamolease.ErrBadPosition
		}
		from = after + "\x00"
	}
	callCtx, cancel := t.callContext(ctx)
	resp, err := t.client.Get(callCtx, from, clientv3.WithRange(end), clientv3.WithLimit(int64(limit)),
		clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	cancel()
	if err != nil {
		return nil, "", fmt.Errorf("etcd list leases under %q: %w", start, err)
	}
	var rows []dynamolease.Record
	for _, kv := range resp.Kvs {
		path, etag, ok := t.splitKey(string(kv.Key))
		if !ok || !strings.HasPrefix(path, prefix) {
			continue // not a lease row (a key someone else put under the prefix)
		}
		r, err := decodeEtcdRow(kv.Value, path, etag)
		if err != nil {
			return nil, "", err
		}
		rows = append(rows, *r)
	}
	if !resp.More || len(resp.Kvs) == 0 {
		return rows, "", nil
	}
	return rows, string(resp.Kvs[len(resp.Kvs)-1].Key), nil
}

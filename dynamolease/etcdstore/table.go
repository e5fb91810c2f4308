package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/internal/rowcodec"
)

// DefaultPrefix is where Table keeps its rows unless told otherwise.
const DefaultPrefix = "s3cond/leases/"

// Table is a dynamolease.Table on an etcd v3 cluster, for a fleet of s3cond
// processes without DynamoDB. Each row is one key:
//
//	<prefix><path, path-escaped>/<etag, path-escaped>
//
// (url.PathEscape escapes "/", so the one unescaped "/" after the prefix
// separates the two parts unambiguously). Its value is the generation as 20
// decimal digits and a newline, then the rest of the row as JSON (see
// row.go). Every write is a single Txn: Create puts only if the key's
// create_revision is 0 (absent), Replace only if the value starts with the
// seen generation, and both read the current row in the Txn's else branch,
// so a loser learns what beat it in the same round trip. Reads are etcd's
// default, linearizable. Each write attaches the row to an etcd lease that
// ends no earlier than the row's TTL (leases.go): etcd deletes dead rows
// by itself, as DynamoDB's TTL does.
type Table struct {
	client      *clientv3.Client
	prefix      string
	callTimeout time.Duration
	leases      *rowLeases
}

// DefaultCallTimeout bounds each etcd request unless told otherwise, so a
// cluster without quorum turns into a StoreError quickly.
const DefaultCallTimeout = 3 * time.Second

// Option tunes a Table.
type Option func(*Table)

// WithCallTimeout bounds each etcd request (default DefaultCallTimeout):
// a cluster without quorum then fails a conditional write within it.
func WithCallTimeout(d time.Duration) Option {
	return func(t *Table) { t.callTimeout = d }
}

// WithPrefix sets the key prefix of the rows (default DefaultPrefix).
func WithPrefix(prefix string) Option {
	return func(t *Table) { t.prefix = prefix }
}

// New returns the lease table on client. The caller keeps
// ownership of client and closes it after the last use of the table.
func New(client *clientv3.Client, opts ...Option) *Table {
	t := &Table{client: client, prefix: DefaultPrefix, callTimeout: DefaultCallTimeout}
	for _, o := range opts {
		o(t)
	}
	t.leases = newRowLeases(client)
	return t
}

// Prefix is the key prefix of the rows.
func (t *Table) Prefix() string { return t.prefix }

// Key is the etcd key of the row (path, etag).
func (t *Table) Key(path, etag string) string {
	return t.prefix + url.PathEscape(path) + "/" + url.PathEscape(etag)
}

// Create implements dynamolease.Table: put if the key has never been created
// (or was deleted when its lease expired).
func (t *Table) Create(ctx context.Context, r dynamolease.Record) (*dynamolease.Record, error) {
	key := t.Key(r.Path, r.ETag)
	absent := clientv3.Compare(clientv3.CreateRevision(key), "=", 0)
	return t.conditionalPut(ctx, "create", r, absent)
}

// Replace implements dynamolease.Table: put if the stored value starts with the
// seen generation. The generation is the value's fixed-width first line, so
// "starts with it" is two byte comparisons: greater than that line, and less
// than the line with its newline bumped by one. A missing key fails both (etcd
// fails a value comparison on a key that does not exist).
func (t *Table) Replace(ctx context.Context, r dynamolease.Record, seen uint64) (*dynamolease.Record, error) {
	key := t.Key(r.Path, r.ETag)
	if seen == rowcodec.UnreadableGeneration {
		return t.replaceUnreadable(ctx, r, key)
	}
	if r.Fence != nil {
		return t.replaceFenced(ctx, r, seen, key)
	}
	low, high := generationBounds(seen)
	return t.conditionalPut(ctx, "replace", r,
		clientv3.Compare(clientv3.Value(key), ">", low),
		clientv3.Compare(clientv3.Value(key), "<", high))
}

func (t *Table) conditionalPut(ctx context.Context, op string, r dynamolease.Record, conditions ...clientv3.Cmp) (*dynamolease.Record, error) {
	r = dynamolease.Normalise(r)
	key := t.Key(r.Path, r.ETag)
	value, err := encodeEtcdRow(r)
	if err != nil {
		return nil, err
	}
	callCtx, cancel := t.callContext(ctx)
	defer cancel()
	resp, err := t.txnWithLease(callCtx, r.TTL, func(putOpts ...clientv3.OpOption) (*clientv3.TxnResponse, error) {
		return t.client.Txn(callCtx).If(conditions...).
			Then(clientv3.OpPut(key, value, putOpts...)).
			Else(clientv3.OpGet(key)).
			Commit()
	})
	if err != nil {
		return nil, fmt.Errorf("etcd %s lease %q %q: %w", op, r.Path, r.ETag, err)
	}
	if resp.Succeeded {
		return nil, nil
	}
	current, err := t.rowFromTxnElse(resp, r.Path, r.ETag)
	if err != nil {
		return nil, err
	}
	return current, dynamolease.ErrConditionFailed
}

// txnWithLease runs a write with the etcd lease that keeps the row until
// ttl (none for a zero ttl). A lease that vanished under it (revoked by
// hand) is replaced once.
func (t *Table) txnWithLease(ctx context.Context, ttl time.Time, txn func(...clientv3.OpOption) (*clientv3.TxnResponse, error)) (*clientv3.TxnResponse, error) {
	if ttl.IsZero() {
		return txn()
	}
	for attempt := 0; ; attempt++ {
		id, err := t.leases.leaseFor(ctx, ttl)
		if err != nil {
			return nil, err
		}
		resp, err := txn(clientv3.WithLease(id))
		if errors.Is(err, rpctypes.ErrLeaseNotFound) && attempt == 0 {
			t.leases.forget(id)
			continue
		}
		return resp, err
	}
}

func (t *Table) rowFromTxnElse(resp *clientv3.TxnResponse, path, etag string) (*dynamolease.Record, error) {
	if len(resp.Responses) != 1 {
		return nil, fmt.Errorf("etcd lease %q %q: failed transaction returned %d responses, want 1", path, etag, len(resp.Responses))
	}
	kvs := resp.Responses[0].GetResponseRange().GetKvs()
	if len(kvs) == 0 {
		return nil, nil // absent (Replace), or deleted in between (cannot happen within a Txn)
	}
	return decodeEtcdRow(kvs[0].Value, path, etag)
}

// Get implements dynamolease.Table with a linearizable read.
func (t *Table) Get(ctx context.Context, path, etag string) (*dynamolease.Record, error) {
	callCtx, cancel := t.callContext(ctx)
	defer cancel()
	resp, err := t.client.Get(callCtx, t.Key(path, etag))
	if err != nil {
		return nil, fmt.Errorf("etcd get lease %q %q: %w", path, etag, err)
	}
	if len(resp.Kvs) == 0 {
		return nil, nil
	}
	return decodeEtcdRow(resp.Kvs[0].Value, path, etag)
}

// callContext bounds one request and makes a member without a leader refuse
// it at once instead of queueing it until the bound: either way the
// conditional write gets its 503 quickly, but refused requests leave no
// proposal behind that might still apply later.
func (t *Table) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	callCtx, cancel := context.WithTimeout(ctx, t.callTimeout)
	return clientv3.WithRequireLeader(callCtx), cancel
}

// replaceUnreadable takes over a row read with rowcodec.UnreadableGeneration (its
// generation line is missing or unusable): the write is conditional on the
// key not having been written since a fresh read showed it so.
func (t *Table) replaceUnreadable(ctx context.Context, r dynamolease.Record, key string) (*dynamolease.Record, error) {
	return t.replaceAsRead(ctx, r, key, func(current dynamolease.Record) bool {
		return current.Generation == rowcodec.UnreadableGeneration
	})
}

// replaceFenced is a takeover's Replace (dynamolease/fence.go): the row is
// read, checked against the generation and the fence, and written on
// condition that the key has not been written since that read. The row's
// JSON may come from any writer's encoder, so no comparison of its bytes
// could stand for the decoded fields; the revision does.
func (t *Table) replaceFenced(ctx context.Context, r dynamolease.Record, seen uint64, key string) (*dynamolease.Record, error) {
	return t.replaceAsRead(ctx, r, key, func(current dynamolease.Record) bool {
		return current.Generation == seen && r.Fence.Matches(current)
	})
}

// replaceAsRead reads key's row and writes r only if wanted accepts the
// row read and the key has not been written since (its mod revision).
func (t *Table) replaceAsRead(ctx context.Context, r dynamolease.Record, key string, wanted func(dynamolease.Record) bool) (*dynamolease.Record, error) {
	callCtx, cancel := t.callContext(ctx)
	resp, err := t.client.Get(callCtx, key)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("etcd get lease %q %q: %w", r.Path, r.ETag, err)
	}
	if len(resp.Kvs) == 0 {
		return nil, dynamolease.ErrConditionFailed
	}
	current, err := decodeEtcdRow(resp.Kvs[0].Value, r.Path, r.ETag)
	if err != nil {
		return nil, err
	}
	if !wanted(*current) {
		return current, dynamolease.ErrConditionFailed
	}
	return t.conditionalPut(ctx, "replace", r,
		clientv3.Compare(clientv3.ModRevision(key), "=", resp.Kvs[0].ModRevision))
}

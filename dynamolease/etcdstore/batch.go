package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/internal/rowcodec"
)

var _ dynamolease.BatchTable = (*Table)(nil)

// etcd refuses a transaction of more than --max-txn-ops (128 by default)
// comparisons, or of success or failure operations, and a request over
// --max-request-bytes (1.5 MiB by default). A create is one comparison per
// row, a replace two (row.go's generationBounds).
const (
	etcdCreateBatch  = 100
	etcdReplaceBatch = 64
	etcdBatchBytes   = 1 << 20
)

// maxTransactAttempts bounds how often one batch call sends a transaction
// again after a refusal; what is left then goes row by row.
const maxTransactAttempts = 3

// MaxBatch implements dynamolease.BatchTable.
func (t *Table) MaxBatch() int { return etcdCreateBatch }

// etcdPut is one row of a batch, encoded.
type etcdPut struct {
	key, value string
}

// CreateInOrder implements dynamolease.BatchTable with one transaction per batch: put
// every row if no key of them exists, else read them all. When one
// exists, the rows before it are sent again. A cluster that refuses the
// transaction's size gets the rows one by one.
func (t *Table) CreateInOrder(ctx context.Context, rs []dynamolease.Record) (int, *dynamolease.Record, error) {
	done := 0
	for done < len(rs) {
		chunk := etcdChunk(rs[done:], etcdCreateBatch)
		created, existing, err := t.createChunk(ctx, rs[done:done+chunk])
		if errors.Is(err, rpctypes.ErrTooManyOps) || errors.Is(err, rpctypes.ErrRequestTooLarge) {
			n, existing, err := dynamolease.CreateInOrderOneByOne(ctx, t, rs[done:])
			return done + n, existing, err
		}
		done += created
		if err != nil || created < chunk {
			return done, existing, err
		}
	}
	return done, nil, nil
}

// etcdChunk is how many of rs, at most n, fit in one request.
func etcdChunk(rs []dynamolease.Record, n int) int {
	size := 0
	for i, r := range rs[:min(n, len(rs))] {
		// The key escapes path and etag (up to 3 bytes each), the value
		// repeats them in JSON (up to 6 bytes each).
		size += 9*(len(r.Path)+len(r.ETag)) + len(r.Owner) + 256
		if size > etcdBatchBytes && i > 0 {
			return i
		}
	}
	return min(n, len(rs))
}

// createChunk creates rs in order up to the first that exists, in
// transactions of all of them.
func (t *Table) createChunk(ctx context.Context, rs []dynamolease.Record) (int, *dynamolease.Record, error) {
	limit := len(rs)
	var existing *dynamolease.Record
	for attempt := 0; limit > 0; attempt++ {
		if attempt == maxTransactAttempts {
			return 0, nil, nil // rs[0] keeps being refused: the caller takes it on its own
		}
		puts, err := t.encodePuts(rs[:limit])
		if err != nil {
			return 0, nil, err
		}
		conds := make([]clientv3.Cmp, limit)
		for i, p := range puts {
			conds[i] = clientv3.Compare(clientv3.CreateRevision(p.key), "=", 0)
		}
		resp, err := t.batchTxn(ctx, rs[:limit], puts, conds)
		if err != nil {
			return 0, nil, fmt.Errorf("etcd create %d leases: %w", limit, err)
		}
		if resp.Succeeded {
			return limit, existing, nil
		}
		stop, found, err := t.firstExisting(resp, rs[:limit])
		if err != nil {
			return 0, nil, err
		}
		limit, existing = stop, found
	}
	return 0, existing, nil
}

// firstExisting finds, in a failed create's reads, the first row that
// exists. A row this call wrote itself (a retried request whose first
// attempt landed) does not count.
func (t *Table) firstExisting(resp *clientv3.TxnResponse, rs []dynamolease.Record) (int, *dynamolease.Record, error) {
	if len(resp.Responses) != len(rs) {
		return 0, nil, fmt.Errorf("etcd create %d leases: failed transaction returned %d responses", len(rs), len(resp.Responses))
	}
	for i, r := range rs {
		kvs := resp.Responses[i].GetResponseRange().GetKvs()
		if len(kvs) == 0 {
			continue
		}
		row, err := decodeEtcdRow(kvs[0].Value, r.Path, r.ETag)
		if err != nil {
			return 0, nil, err
		}
		if !dynamolease.WroteIt(row, r) {
			return i, row, nil
		}
	}
	return 0, nil, nil
}

func (t *Table) encodePuts(rs []dynamolease.Record) ([]etcdPut, error) {
	puts := make([]etcdPut, len(rs))
	for i, r := range rs {
		r = dynamolease.Normalise(r)
		value, err := encodeEtcdRow(r)
		if err != nil {
			return nil, err
		}
		puts[i] = etcdPut{key: t.Key(r.Path, r.ETag), value: value}
	}
	return puts, nil
}

// batchTxn runs If(conds) Then(put every row) Else(read every row), the
// rows attached to an etcd lease that outlives the latest TTL among them.
func (t *Table) batchTxn(ctx context.Context, rs []dynamolease.Record, puts []etcdPut, conds []clientv3.Cmp) (*clientv3.TxnResponse, error) {
	var ttl time.Time
	for _, r := range rs {
		if r.TTL.After(ttl) {
			ttl = r.TTL
		}
	}
	callCtx, cancel := t.callContext(ctx)
	defer cancel()
	return t.txnWithLease(callCtx, ttl, func(putOpts ...clientv3.OpOption) (*clientv3.TxnResponse, error) {
		then, orElse := make([]clientv3.Op, len(puts)), make([]clientv3.Op, len(puts))
		for i, p := range puts {
			then[i] = clientv3.OpPut(p.key, p.value, putOpts...)
			orElse[i] = clientv3.OpGet(p.key)
		}
		return t.client.Txn(callCtx).If(conds...).Then(then...).Else(orElse...).Commit()
	})
}

// ReplaceEach implements dynamolease.BatchTable with one transaction per chunk of
// rows, each row conditional on its generation: when one fails, it is
// answered from the transaction's reads, and the others are sent again.
// Rows read with an unreadable generation, and a cluster that refuses the
// transaction's size, go row by row.
func (t *Table) ReplaceEach(ctx context.Context, rs []dynamolease.Record, seen []uint64) ([]bool, []*dynamolease.Record, error) {
	written, current := make([]bool, len(rs)), make([]*dynamolease.Record, len(rs))
	var pending []int
	for i := range rs {
		if seen[i] != rowcodec.UnreadableGeneration {
			pending = append(pending, i)
		}
	}
	for attempt := 0; len(pending) > 0 && attempt < maxTransactAttempts; attempt++ {
		var again []int
		for len(pending) > 0 {
			n := min(len(pending), etcdReplaceBatch)
			left, err := t.replaceChunk(ctx, rs, seen, pending[:n], written, current)
			if errors.Is(err, rpctypes.ErrTooManyOps) || errors.Is(err, rpctypes.ErrRequestTooLarge) {
				again = append(again, pending...)
				attempt = maxTransactAttempts
				break
			}
			if err != nil {
				return written, current, err
			}
			again, pending = append(again, left...), pending[n:]
		}
		pending = again
	}
	err := dynamolease.ReplaceUndecided(ctx, t, rs, seen, written, current)
	return written, current, err
}

// replaceChunk sends the rows idx in one transaction and returns those to
// send again (the ones that did not fail their own condition).
func (t *Table) replaceChunk(ctx context.Context, rs []dynamolease.Record, seen []uint64, idx []int, written []bool, current []*dynamolease.Record) ([]int, error) {
	sub := make([]dynamolease.Record, len(idx))
	conds := make([]clientv3.Cmp, 0, 2*len(idx))
	for j, i := range idx {
		sub[j] = rs[i]
		key := t.Key(rs[i].Path, rs[i].ETag)
		low, high := generationBounds(seen[i])
		conds = append(conds, clientv3.Compare(clientv3.Value(key), ">", low), clientv3.Compare(clientv3.Value(key), "<", high))
	}
	puts, err := t.encodePuts(sub)
	if err != nil {
		return nil, err
	}
	resp, err := t.batchTxn(ctx, sub, puts, conds)
	if err != nil {
		return nil, fmt.Errorf("etcd replace %d leases: %w", len(idx), err)
	}
	if resp.Succeeded {
		for _, i := range idx {
			written[i] = true
		}
		return nil, nil
	}
	if len(resp.Responses) != len(idx) {
		return nil, fmt.Errorf("etcd replace %d leases: failed transaction returned %d responses", len(idx), len(resp.Responses))
	}
	var again []int
	for j, i := range idx {
		kvs := resp.Responses[j].GetResponseRange().GetKvs()
		if len(kvs) == 0 {
			continue // absent: the condition failed, nothing to report
		}
		row, err := decodeEtcdRow(kvs[0].Value, rs[i].Path, rs[i].ETag)
		if err != nil {
			return nil, err
		}
		switch {
		case dynamolease.WroteIt(row, rs[i]):
			written[i] = true
		case row.Generation != seen[i]:
			current[i] = row
		default:
			again = append(again, i)
		}
	}
	return again, nil
}

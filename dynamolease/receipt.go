package dynamolease

import (
	"context"
	"errors"
	"time"
)

// Receipts (SPEC §3, "Exactly-once retries"; docs/correctness.md). A
// write whose answer was lost on its way to the client (a timeout, a reset
// after the store committed) is retried by the client's SDK; evaluated
// again, a conditional retry meets the object it wrote itself and fails
// with 412, and the application concludes it lost a race it won. So the
// holder of a lease records, on the row it releases, the answer its write
// got (Lease.RecordReceipt): no extra table request, the release writes
// the row anyway. A retry whose condition fails reads the row its
// condition names (Committer.Receipt: one Get, on the failure path only)
// and the caller decides whether the receipt is its own (the proxy binds
// it to the principal, the SDK's invocation id and the body's digest).
// A completion is recorded on a row of its own (Committer.PutReceipt),
// since an unconditional one takes no lease, and a retry of it must find
// the answer whatever condition it carries.
//
// The row's TTL bounds a receipt in time: Receipt reads none from a row
// past it, whatever a lazy TTL sweep (DynamoDB's takes up to two days)
// left behind. MaxReceiptLength bounds it in size. Every other write of
// the row (acquire, renewal, takeover, a release without a receipt) writes
// it whole without one: a receipt never outlives the next holder.

// MaxReceiptLength bounds a receipt as stored: a longer one is not
// written, and read as none.
const MaxReceiptLength = 16 << 10

// ReceiptRowPrefix starts the sort key of a row that carries a receipt of
// its own rather than a lease: no ETag (always quoted) nor "*" starts so,
// so no lease ever takes such a row.
const ReceiptRowPrefix = "receipt "

// RecordReceipt sets the receipt Release records on the row: the answer
// this lease's write got. Call it only once the write's answer was read in
// full, and only for a write of this one key. A receipt longer than
// MaxReceiptLength is not recorded.
func (l *Lease) RecordReceipt(text string) {
	if len(text) > MaxReceiptLength || unsafeNoReceipts {
		return
	}
	l.opMu.Lock()
	defer l.opMu.Unlock()
	l.receipt = text
}

// PutReceipt writes a row (path, ReceiptRowPrefix+name) of its own,
// released, carrying text for the table's row TTL (Options.TTL), unless
// one within its TTL carries a receipt already: then it returns that one,
// unchanged (a retry the store answered itself is given the first
// answer). A caller that needs it found by a retry writes it before it
// answers.
func (c *Committer) PutReceipt(ctx context.Context, path, name, text string) (earlier string, err error) {
	if len(text) > MaxReceiptLength || unsafeNoReceipts {
		return "", nil
	}
	r := Record{
		Path: path, ETag: ReceiptRowPrefix + name, Generation: firstGeneration(), Timeout: c.opts.Timeout,
		TTL: time.Now().Add(c.opts.TTL), Owner: c.opts.Owner, Released: true, Receipt: text,
	}
	call, done := tableCall(ctx)
	existing, err := c.table.Create(call, r)
	done()
	if errors.Is(err, ErrConditionFailed) && existing != nil {
		if receiptOf(existing) != "" {
			return existing.Receipt, nil
		}
		r.Generation = existing.Generation + 1
		call, done = tableCall(ctx)
		_, err = c.table.Replace(call, r, existing.Generation)
		done()
	}
	if err != nil {
		return "", c.storeError(ctx, "receipt", err)
	}
	return "", nil
}

// receiptOf is a row's receipt: empty unless the row is sound, released
// and within its TTL.
func receiptOf(row *Record) string {
	if row == nil || row.Unreadable != "" || !row.Released || (!row.TTL.IsZero() && row.TTL.Before(time.Now())) {
		return ""
	}
	return row.Receipt
}

// ReceiptRow is Receipt for a row PutReceipt wrote.
func (c *Committer) ReceiptRow(ctx context.Context, path, name string) (string, error) {
	return c.Receipt(ctx, path, ReceiptRowPrefix+name)
}

// Receipt is the receipt on the row (path, etag), empty when there is
// none, the row is past its TTL, or the table failed. A row still held is
// awaited, for at most Options.WaitBudget, polled every PollInterval: an
// SDK's retry may reach one s3cond before the release of the attempt it
// retries (which follows that attempt's answer) reached the table.
func (c *Committer) Receipt(ctx context.Context, path, etag string) (string, error) {
	if unsafeNoReceipts {
		return "", nil
	}
	end := time.Now().Add(c.opts.WaitBudget)
	for {
		call, done := tableCall(ctx)
		row, err := c.table.Get(call, path, etag)
		done()
		switch {
		case err != nil:
			return "", c.storeError(ctx, "get", err)
		case row == nil || row.Released || row.Unreadable != "" || !time.Now().Before(end):
			return receiptOf(row), nil
		}
		if err := sleepUntil(ctx, earliest(time.Now().Add(c.opts.PollInterval), end), nil); err != nil {
			return "", err
		}
	}
}

package dynamolease

import (
	"context"
	"errors"
	"strconv"
	"strings"
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
// A receipt is proof that one invocation committed, so it stays true
// whoever holds the row next, and is kept until its own time is up: a
// lease that took over (or created over) a row carrying one, and releases
// without a receipt of its own (a loser of the race that re-checked and
// failed, a retry, a write with no invocation id), writes it back on its
// release; one that records its own replaces it. Else the loser of a race
// on one expected ETag, which takes the released row over to re-check,
// would erase the winner's receipt before the winner's retry reads it.
// A receipt carries the time it was recorded (sealReceipt) and answers
// for Options.TTL from then, never longer, however often holders carry
// it: the row's TTL, refreshed by every holder of a hot row, does not
// bound it. Receipt also reads none from a row past its TTL, whatever a
// lazy TTL sweep (DynamoDB's takes up to two days) left behind.
// MaxReceiptLength bounds it in size. Renewals and takeovers write the
// row without one (the holder keeps it to write back): a holder that dies
// holding the row loses the receipt it carried.

// MaxReceiptLength bounds a receipt as stored, its recorded time
// included: a longer one is not written, and read as none.
const MaxReceiptLength = 16 << 10

// receiptSealLength bounds what sealReceipt adds to a receipt's text.
const receiptSealLength = 21

// ReceiptRowPrefix starts the sort key of a row that carries a receipt of
// its own rather than a lease: no ETag (always quoted) nor "*" starts so,
// so no lease ever takes such a row.
const ReceiptRowPrefix = "receipt "

// RecordReceipt sets the receipt Release records on the row: the answer
// this lease's write got. Call it only once the write's answer was read in
// full, and only for a write of this one key. A receipt longer than
// MaxReceiptLength is not recorded.
func (l *Lease) RecordReceipt(text string) {
	if len(text) > MaxReceiptLength-receiptSealLength || unsafeNoReceipts {
		return
	}
	l.opMu.Lock()
	defer l.opMu.Unlock()
	l.receipt = sealReceipt(text, time.Now())
}

// releasedReceipt is the receipt a release of l writes: its own, else the
// one the row carried when l took it, while that one is within its time.
func (l *Lease) releasedReceipt() string {
	if l.receipt != "" {
		return l.receipt
	}
	if openReceipt(l.carried, time.Now(), l.c.opts.TTL) == "" {
		return ""
	}
	return l.carried
}

// PutReceipt writes a row (path, ReceiptRowPrefix+name) of its own,
// released, carrying text for the table's row TTL (Options.TTL), unless
// one within its TTL carries a receipt already: then it returns that one,
// unchanged (a retry the store answered itself is given the first
// answer). A caller that needs it found by a retry writes it before it
// answers.
func (c *Committer) PutReceipt(ctx context.Context, path, name, text string) (earlier string, err error) {
	if len(text) > MaxReceiptLength-receiptSealLength || unsafeNoReceipts {
		return "", nil
	}
	now := time.Now()
	r := Record{
		Path: path, ETag: ReceiptRowPrefix + name, Generation: firstGeneration(), Timeout: c.opts.Timeout,
		TTL: now.Add(c.opts.TTL), Owner: c.opts.Owner, Released: true, Receipt: sealReceipt(text, now),
	}
	call, done := tableCall(ctx)
	existing, err := c.table.Create(call, r)
	done()
	if errors.Is(err, ErrConditionFailed) && existing != nil {
		if earlier := c.receiptOf(existing); earlier != "" {
			return earlier, nil
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

// receiptOf is a row's receipt, opened (openReceipt): empty unless the row
// is sound, released and within its TTL, and the receipt within its own.
func (c *Committer) receiptOf(row *Record) string {
	return openReceipt(c.sealedReceiptOf(row), time.Now(), c.opts.TTL)
}

// sealedReceiptOf is a row's receipt as stored, for a lease taking the row
// to carry forward: empty unless the row is sound, released and within its
// TTL.
func (c *Committer) sealedReceiptOf(row *Record) string {
	if row == nil || row.Unreadable != "" || !row.Released || (!row.TTL.IsZero() && row.TTL.Before(time.Now())) {
		return ""
	}
	return row.Receipt
}

// sealReceipt is a receipt as stored: the time it was recorded (Unix
// milliseconds, on the recording process's clock), a space, its text.
func sealReceipt(text string, at time.Time) string {
	return strconv.FormatInt(at.UnixMilli(), 10) + " " + text
}

// openReceipt is the text of a stored receipt recorded less than ttl
// before now (and not more than ttl after it: a clock that far ahead is
// not believed); empty for one past its time, or not sealed.
func openReceipt(stored string, now time.Time, ttl time.Duration) string {
	at, text, ok := strings.Cut(stored, " ")
	if !ok || text == "" {
		return ""
	}
	millis, err := strconv.ParseInt(at, 10, 64)
	if err != nil {
		return ""
	}
	age := now.Sub(time.UnixMilli(millis))
	if age >= ttl || age <= -ttl {
		return ""
	}
	return text
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
			return c.receiptOf(row), nil
		}
		if err := sleepUntil(ctx, earliest(time.Now().Add(c.opts.PollInterval), end), nil); err != nil {
			return "", err
		}
	}
}

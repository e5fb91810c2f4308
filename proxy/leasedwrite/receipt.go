package leasedwrite

import (
	"net/http"

	"github.com/s3cond/s3cond/dynamolease"
)

// Receipts (SPEC §3, "Exactly-once retries"; dynamolease/receipt.go): a
// write whose answer, read in full, was a success leaves that answer's
// receipt (Request.Receipt makes it) on the row its lease releases, in
// the release's own table write, so a retry whose answer was lost can be
// given it. guard.end releases only when the answer was read in full; any
// other outcome records nothing.

// MaxReceiptLength bounds a receipt as the lease table stores it
// (dynamolease.MaxReceiptLength): proxy keeps no more of an answer than
// this, and meets the table only through this package.
const MaxReceiptLength = dynamolease.MaxReceiptLength

// noteAnswerAndReceipt is the Guard's Answered: the key's state for
// strict mode's record, and the answer's receipt.
func (lw *write) noteAnswerAndReceipt(status int, header http.Header) {
	lw.noteAnswer(status, header)
	if lw.req.Receipt != nil && status >= 200 && status <= 299 {
		lw.receipt = lw.req.Receipt(status, header)
	}
}

// recordReceipt hands the receipt to the write's one lease, which records
// it on release.
func (lw *write) recordReceipt() {
	if lw.receipt == "" || lw.g == nil {
		return
	}
	lw.g.mu.Lock()
	leases := lw.g.leases
	lw.g.mu.Unlock()
	if len(leases) == 1 {
		leases[0].RecordReceipt(lw.receipt)
	}
}

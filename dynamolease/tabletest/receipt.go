package tabletest

import (
	"strings"
	"testing"

	"github.com/s3cond/s3cond/dynamolease"
)

// testReceiptCarriedAcrossHolders: a release carrying a receipt
// (dynamolease/receipt.go), read back whole; a takeover writing none
// stores none while it holds the row, and its release writing the receipt
// back (the carry-forward of a holder that did not commit) stores it
// again; a receipt row of its own (a sort key no ETag has) round trips
// beside the lease rows of the same path.
func testReceiptCarriedAcrossHolders(t *testing.T, tbl dynamolease.Table, path string) {
	receipt := `{"etag":"\"9b2cf535f27731c974343645a3985328\"","note":"` + strings.Repeat("é", 200) + `"}`
	held := record(path, "*", 7, "holder")
	if _, err := tbl.Create(ctx(t), held); err != nil {
		t.Fatal(err)
	}
	released := held
	released.Released = true
	released.Receipt = receipt
	if _, err := tbl.Replace(ctx(t), released, 7); err != nil {
		t.Fatalf("release carrying a receipt: %v", err)
	}
	if got := mustGet(t, tbl, path, "*"); got.Receipt != receipt || !got.Released {
		t.Fatalf("released row: receipt %q released %v, want %q", got.Receipt, got.Released, receipt)
	}
	takenOver := record(path, "*", 8, "next")
	takenOver.Fence = dynamolease.FenceOf(mustGet(t, tbl, path, "*"))
	if _, err := tbl.Replace(ctx(t), takenOver, 7); err != nil {
		t.Fatalf("takeover: %v", err)
	}
	if got := mustGet(t, tbl, path, "*"); got.Receipt != "" || got.Released {
		t.Fatalf("row taken over: receipt %q released %v, want none, held", got.Receipt, got.Released)
	}
	carried := takenOver
	carried.Fence, carried.Released, carried.Receipt = nil, true, receipt
	if _, err := tbl.Replace(ctx(t), carried, 8); err != nil {
		t.Fatalf("release writing the receipt back: %v", err)
	}
	if got := mustGet(t, tbl, path, "*"); got.Receipt != receipt || !got.Released || got.Generation != 8 {
		t.Fatalf("row released by the next holder: receipt %q released %v generation %d, want %q", got.Receipt,
			got.Released, got.Generation, receipt)
	}
	own := record(path, dynamolease.ReceiptRowPrefix+"complete upload-1", 3, "completer")
	own.Released = true
	own.Receipt = receipt
	if _, err := tbl.Create(ctx(t), own); err != nil {
		t.Fatalf("receipt row: %v", err)
	}
	if got := mustGet(t, tbl, path, own.ETag); got.Receipt != receipt {
		t.Fatalf("receipt row: receipt %q, want %q", got.Receipt, receipt)
	}
	if got := mustGet(t, tbl, path, "*"); got.Generation != 8 || got.Receipt != receipt {
		t.Fatalf("the lease row beside the receipt row changed: %+v", got)
	}
}

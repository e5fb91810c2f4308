package linearizability

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// unsafeBatchTakesHeldRows is the build tag of dynamolease's deliberately
// unsafe batches: a DeleteObjects takes a row its batch found existing over
// at once, held or not, and skips its re-check, instead of waiting for it.
const unsafeBatchTakesHeldRows = "s3cond_unsafe_batch_takes_held_rows"

// TestNegativeControlBatchTakingHeldRows: the DeleteObjects history that
// the real protocol passes on every lease store
// (TestLinearizableDeleteObjectsWithRepeatsAndLongLeaseWaits) must be found
// Illegal when the batches do not wait for rows someone holds; without
// that, the history passing would say nothing about the batches.
func TestNegativeControlBatchTakingHeldRows(t *testing.T) {
	rec := recordDeleteObjects(t, ClusterOptions{BuildTags: unsafeBatchTakesHeldRows}, 14*time.Second, false)
	result := Check(t, rec)
	t.Logf("checked %s: %s", rec.Stats(), result)
	if result != porcupine.Illegal {
		t.Fatalf("the checker found %s for batches that take held rows over; want Illegal: the suite cannot see the per-row wait", result)
	}
}

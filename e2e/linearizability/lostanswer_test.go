package linearizability

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// unsafeNoReceipts is the build tag of dynamolease without receipts: a
// conditional write whose answer was lost is evaluated again on its retry.
const unsafeNoReceipts = "s3cond_unsafe_no_receipts"

// lostAnswerCase is a cluster the lost-answer workload runs on.
type lostAnswerCase struct {
	name string
	opts ClusterOptions
}

// lostAnswerCases: one s3cond on versitygw with its embedded lease store,
// and a fleet of three sharing a DynamoDB table (moto), each retry going to
// the s3cond of its first attempt. Not s3rver: it writes an object's body
// before its ETag, so a HEAD racing a write there answers the old ETag
// with the new body readable (and its CopyObject is not atomic): histories
// on it fail for reasons of its own more often than this workload's
// lost answers can tell (its retried completions are e2e's
// TestRetriedCompleteAnswersAsTheFirst, its receipts
// TestLostAnswerRetryGetsItsReceipt).
func lostAnswerCases(t *testing.T) []lostAnswerCase {
	return []lostAnswerCase{
		{name: "embedded"},
		{name: "dynamodb-fleet", opts: ClusterOptions{Proxies: 3, DynamoDB: true, Moto: sharedMoto(t), Table: uniqueTable()}},
	}
}

// recordLostAnswers records creates, compare-and-swaps and copies of
// three keys by clients whose network loses about one answer of a
// conditional PUT in three after s3cond sent it; the SDK retries each.
// A PUT is a PutObject or a CopyObject: copies whose answers are lost are
// retried as the SDK retries them, with the same source.
// Nothing waits for a cut write's retry (LostAnswers): the same keys are
// read, CAS'd (on the cut write's own expected ETag too) and copied over
// meanwhile. No deletes: a lease row keeps one receipt, and a delete lets
// a second create commit on the "*" row the first's receipt is on.
func recordLostAnswers(t *testing.T, tc lostAnswerCase) *Recorder {
	c := NewCluster(t, tc.opts)
	lost := &LostAnswers{OneIn: 3}
	w := Workload{Cluster: c, Keys: threeKeys, Clients: 6, NoDeletes: true, CopyOneIn: 4, Pace: 5 * time.Millisecond,
		NewClient: func(id int, timeout time.Duration) *s3.Client { return c.lossyClient(id, timeout, lost) }}
	rec := record(t, w, recordingTime(t, 5*time.Second), nil)
	requireProgress(t, rec, 10)
	t.Logf("%d answers lost, %d of them to writes that committed", lost.Lost.Load(), lost.Committed.Load())
	if lost.Committed.Load() < 5 {
		t.Fatalf("only %d answers to committed writes were lost: too few to tell anything", lost.Committed.Load())
	}
	return rec
}

// TestLinearizableWhenAnswersAreLost (issue 36 item 4): a conditional
// write whose answer is lost after it committed is retried by the SDK
// with the same invocation id and body, and its retry gets the receipt
// its first attempt left (200 and its ETag), never 412: no write the
// client was told failed is ever read.
func TestLinearizableWhenAnswersAreLost(t *testing.T) {
	for _, tc := range lostAnswerCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			RequireLinearizable(t, recordLostAnswers(t, tc))
		})
	}
}

// TestNegativeControlLostAnswersWithoutReceipts: the same workload on an
// s3cond without receipts must not be linearizable: the retries of
// committed writes answer 412, and their values are read.
func TestNegativeControlLostAnswersWithoutReceipts(t *testing.T) {
	for _, tc := range lostAnswerCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.BuildTags = unsafeNoReceipts
			rec := recordLostAnswers(t, tc)
			result := Check(t, rec)
			t.Logf("checked %s: %s", rec.Stats(), result)
			if result != porcupine.Illegal {
				t.Fatalf("the checker found %s for an s3cond without receipts; want Illegal: the suite cannot see a lost answer", result)
			}
		})
	}
}

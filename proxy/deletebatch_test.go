package proxy

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3cond/s3cond/dynamolease/leasetest"
)

// batchCountingTable stands for a lease store that commits many rows in
// one request (DynamoDB's TransactWriteItems, at most 100 rows; an etcd
// transaction; a bbolt commit): the in-memory table, taking at most
// maxBatch rows per call, each call delayed by latency (the store's round
// trip). Its batchCalls counts the calls by kind.
func newBatchCountingTable(maxBatch int, latency time.Duration) (*leasetest.Table, *batchCalls) {
	calls := &batchCalls{byOp: map[string]int{}}
	return leasetest.New(leasetest.Hooks{MaxBatch: maxBatch, Before: func(_ context.Context, c leasetest.Call) error {
		if c.Op != leasetest.OpTakeVouched {
			calls.add(c.Op)
			time.Sleep(latency)
		}
		return nil
	}}), calls
}

type batchCalls struct {
	mu   sync.Mutex
	byOp map[string]int
}

func (b *batchCalls) add(op string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.byOp[op]++
}

func (b *batchCalls) count() (total int, byOp map[string]int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	byOp = map[string]int{}
	for op, n := range b.byOp {
		total += n
		byOp[op] = n
	}
	return total, byOp
}

// putMany writes n objects under prefix and returns an entry with its ETag
// for each, in key order.
func (f *fixture) putMany(t *testing.T, prefix string, n int) []s3types.ObjectIdentifier {
	t.Helper()
	objs := make([]s3types.ObjectIdentifier, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range objs {
		key := fmt.Sprintf("%s%04d", prefix, i)
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out, err := f.put(t, key, key, nil)
			if err != nil {
				t.Errorf("put %s: %v", key, err)
				return
			}
			objs[i] = entry(key, out.ETag)
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return objs
}

// TestDeleteObjectsOf1000EntriesTakesLeasesInBatches: a DeleteObjects of
// 1 000 conditional entries nobody else holds takes its leases in
// ⌈1000 / batch⌉ lease store calls and releases them in as many, none row by
// row: 2 calls on the embedded store (one commit each way), 20 with
// DynamoDB's 100 rows per transaction, of which only the 10 that acquire
// are on the request's path. Before, it made 1 000 creates and 1 000
// releases.
func TestDeleteObjectsOf1000EntriesTakesLeasesInBatches(t *testing.T) {
	for _, store := range []struct {
		name     string
		maxBatch int
	}{{"embedded", 1000}, {"dynamodb", 100}} {
		t.Run(store.name, func(t *testing.T) {
			table, calls := newBatchCountingTable(store.maxBatch, 0)
			f := newGuardFixture(t, guardOptions{table: table})
			objs := f.putMany(t, "k", 1000)
			out := f.deleteObjects(t, objs...)
			if len(out.Deleted) != 1000 || len(out.Errors) != 0 {
				t.Fatalf("deleted %d, errors %d (e.g. %+v); want all 1000 deleted", len(out.Deleted), len(out.Errors), firstError(out.Errors))
			}
			batches := (1000 + store.maxBatch - 1) / store.maxBatch
			if err := f.proxy.WaitForReleases(testContext(t)); err != nil {
				t.Fatal(err)
			}
			total, byOp := calls.count()
			if total != 2*batches || byOp["create_batch"] != batches || byOp["replace_batch"] != batches {
				t.Errorf("lease store calls in all: %d %v, want %d batch creates and as many batch releases", total, byOp, batches)
			}
			if store.name == "embedded" && total > 15 {
				t.Errorf("%d lease store calls, over issue 26's 15", total)
			}
			for _, o := range objs[:3] {
				row := f.table.Row(t, bucketName+"/"+aws.ToString(o.Key), aws.ToString(o.ETag))
				if row == nil || !row.Released {
					t.Errorf("lease row of %s after the delete: %+v, want released", aws.ToString(o.Key), row)
				}
			}
		})
	}
}

// TestDeleteObjectsBudgetBoundsOnlyContendedWaits: 999 entries nobody
// holds and one entry on a key another writer holds, with a wait budget
// shorter than taking the free keys' leases (10 batches of a lease store
// 60 ms away). The held key answers 409 after the budget; every other
// entry is deleted. Before, the budget ran from the request's first lease,
// so the keys after it answered 409 too (issue 24 item 6).
func TestDeleteObjectsBudgetBoundsOnlyContendedWaits(t *testing.T) {
	const budget = 300 * time.Millisecond
	table, _ := newBatchCountingTable(100, 60*time.Millisecond)
	f := newGuardFixture(t, guardOptions{table: table, lease: leasetest.Timing{Timeout: 5 * time.Second,
		PollInterval: 20 * time.Millisecond, WaitBudget: budget}})
	objs := f.putMany(t, "k", 999)
	held, err := f.put(t, "k0500-held", "held", nil)
	if err != nil {
		t.Fatal(err)
	}
	lease, err := f.leases.Acquire(context.Background(), bucketName+"/k0500-held", aws.ToString(held.ETag), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lease.Release(context.Background()) }()

	out := f.deleteObjects(t, append(objs, entry("k0500-held", held.ETag))...)
	if len(out.Deleted) != 999 {
		t.Errorf("deleted %d entries, want the 999 nobody held (errors e.g. %+v)", len(out.Deleted), firstError(out.Errors))
	}
	if len(out.Errors) != 1 || aws.ToString(out.Errors[0].Key) != "k0500-held" ||
		aws.ToString(out.Errors[0].Code) != "ConditionalRequestConflict" {
		t.Errorf("errors %d (e.g. %+v), want the held key's 409 alone", len(out.Errors), firstError(out.Errors))
	}
}

func firstError(errs []s3types.Error) string {
	if len(errs) == 0 {
		return "none"
	}
	return aws.ToString(errs[0].Key) + " " + aws.ToString(errs[0].Code) + " " + aws.ToString(errs[0].Message)
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

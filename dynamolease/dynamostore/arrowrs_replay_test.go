package dynamostore_test

import (
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/dynamostore"
	"github.com/s3cond/s3cond/internal/arrowrs"
	"github.com/s3cond/s3cond/internal/testservers"
)

// rawRow reads a row as stored, whatever wrote it.
func rawRow(t *testing.T, client *dynamodb.Client, table, path, etag string) map[string]types.AttributeValue {
	t.Helper()
	out, err := client.GetItem(testContext(t, 10*time.Second), &dynamodb.GetItemInput{
		TableName:      aws.String(table),
		Key:            map[string]types.AttributeValue{"path": &types.AttributeValueMemberS{Value: path}, "etag": &types.AttributeValueMemberS{Value: etag}},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item
}

// arrowRSKeyed is a Committer on a fresh moto table keyed in arrow-rs format
// for bucket "lake", and an arrow-rs client replayed on the same table.
func arrowRSKeyed(t *testing.T, client *dynamodb.Client, format dynamostore.KeyFormat, opts dynamolease.Options) (*dynamolease.Committer, arrowrs.Commit) {
	t.Helper()
	plain := newDynamoTable(t, client)
	tbl := plain
	if format == dynamostore.KeyFormatArrowRS {
		tbl = dynamostore.New(client, plain.Name(), dynamostore.WithArrowRSKeys("lake"))
	}
	return dynamolease.NewCommitter(tbl, opts, zerolog.Nop()),
		arrowrs.New(client, plain.Name())
}

func mustAcquire(t *testing.T, c *dynamolease.Committer, path, etag string) *dynamolease.Lease {
	t.Helper()
	l, err := c.Acquire(testContext(t, 10*time.Second), path, etag, nil)
	if err != nil {
		t.Fatalf("Acquire(%q, %q): %v", path, etag, err)
	}
	return l
}

const lakeETag = `"9b2cf535f27731c974343645a3985328"` // as a HEAD reports it, quotes included

// arrow-rs clients (their DynamoDB requests replayed by internal/arrowrs) and
// s3cond on one table keyed in arrow-rs format block each other.
func TestArrowRSInteroperabilityOnMoto(t *testing.T) {
	client := dynamoClient(t, testservers.StartMoto(t))
	t.Run("ArrowRSLockBlocksS3cond", func(t *testing.T) { testArrowRSLockBlocksS3cond(t, client) })
	t.Run("S3condLeaseBlocksArrowRS", func(t *testing.T) { testS3condLeaseBlocksArrowRS(t, client) })
	t.Run("S3condTakesOverAnArrowRSLockAfterTimeoutTimesSkew", func(t *testing.T) { testS3condTakesOverAnArrowRSLockAfterTimeoutTimesSkew(t, client) })
	t.Run("OtherBucketsAreRefused", func(t *testing.T) { testOtherBucketsAreRefused(t, client) })
	t.Run("BucketKeyFormatDoesNotMeetArrowRS", func(t *testing.T) { testBucketKeyFormatDoesNotMeetArrowRS(t, client) })
}

// shortWait: a 20 s lease (as arrow-rs's), given up on after 300 ms.
var shortWait = dynamolease.Options{Timeout: 20 * time.Second, PollInterval: 50 * time.Millisecond, WaitBudget: 300 * time.Millisecond}

func testArrowRSLockBlocksS3cond(t *testing.T, client *dynamodb.Client) {
	c, arrow := arrowRSKeyed(t, client, dynamostore.KeyFormatArrowRS, shortWait)
	ctx := testContext(t, 20*time.Second)
	if _, ok, err := arrow.TryLock(ctx, "tables/t1/_delta_log/00001.json", "", nil); !ok || err != nil {
		t.Fatalf("arrow-rs try_lock: ok=%v, %v", ok, err)
	}
	_, err := c.Acquire(ctx, "lake/tables/t1/_delta_log/00001.json", "*", nil)
	if !errors.Is(err, dynamolease.ErrWaitBudgetExceeded) {
		t.Fatalf("s3cond Acquire while arrow-rs holds the lock: %v, want ErrWaitBudgetExceeded (409)", err)
	}
}

func testS3condLeaseBlocksArrowRS(t *testing.T, client *dynamodb.Client) {
	c, arrow := arrowRSKeyed(t, client, dynamostore.KeyFormatArrowRS, shortWait)
	ctx := testContext(t, 20*time.Second)
	lease := mustAcquire(t, c, "lake/tables/t1/part-0.parquet", lakeETag)
	// The row is keyed as arrow-rs keys it, with its attributes.
	item := rawRow(t, client, arrow.Table, "tables/t1/part-0.parquet", lakeETag)
	for name, want := range map[string]string{"generation": "N", "timeout": "N", "ttl": "N", "path": "S", "etag": "S"} {
		switch item[name].(type) {
		case *types.AttributeValueMemberN:
			if want != "N" {
				t.Errorf("attribute %s is a number, want %s", name, want)
			}
		case *types.AttributeValueMemberS:
			if want != "S" {
				t.Errorf("attribute %s is a string, want %s", name, want)
			}
		default:
			t.Errorf("attribute %s: %T, want %s", name, item[name], want)
		}
	}
	held, ok, err := arrow.TryLock(ctx, "tables/t1/part-0.parquet", lakeETag, nil)
	if ok || err != nil {
		t.Fatalf("arrow-rs try_lock on a row s3cond holds: ok=%v, %v; want a conflict", ok, err)
	}
	if held.Generation != lease.Generation() || held.Timeout != shortWait.Timeout {
		t.Fatalf("arrow-rs read the s3cond lease as %+v; want generation %d, timeout %s", held, lease.Generation(), shortWait.Timeout)
	}
	// s3cond renews (its random first generation + 1): arrow-rs reclaiming
	// the generation it saw, once its wait is over, fails its condition.
	if err := lease.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	again, ok, err := arrow.TryLock(ctx, "tables/t1/part-0.parquet", lakeETag, &held)
	if ok || err != nil || again.Generation != lease.Generation() {
		t.Fatalf("arrow-rs reclaim after an s3cond renewal: ok=%v, %+v, %v; want a conflict at generation %d", ok, again, err, lease.Generation())
	}
	// A reclaim of the current generation (a holder silent for
	// timeout × skew) wins, and s3cond learns it has lost the lease.
	if _, ok, err := arrow.TryLock(ctx, "tables/t1/part-0.parquet", lakeETag, &again); !ok || err != nil {
		t.Fatalf("arrow-rs reclaim of generation %d: ok=%v, %v", again.Generation, ok, err)
	}
	if err := lease.Renew(ctx); !errors.Is(err, dynamolease.ErrLeaseLost) {
		t.Fatalf("s3cond renewal after arrow-rs reclaimed the row: %v, want ErrLeaseLost", err)
	}
}

func testS3condTakesOverAnArrowRSLockAfterTimeoutTimesSkew(t *testing.T, client *dynamodb.Client) {
	opts := dynamolease.Options{Timeout: 5 * time.Second, MaxClockSkewRate: 2, PollInterval: 50 * time.Millisecond, WaitBudget: 5 * time.Second}
	c, arrow := arrowRSKeyed(t, client, dynamostore.KeyFormatArrowRS, opts)
	arrow.Timeout = 400 * time.Millisecond
	ctx := testContext(t, 20*time.Second)
	if _, ok, err := arrow.TryLock(ctx, "k", lakeETag, nil); !ok || err != nil {
		t.Fatalf("arrow-rs try_lock: ok=%v, %v", ok, err)
	}
	start := time.Now()
	lease, err := c.Acquire(ctx, "lake/k", lakeETag, nil)
	if err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < 2*arrow.Timeout {
		t.Fatalf("took the arrow-rs lock over after %s, before its timeout × skew", waited)
	}
	if lease.Generation() != 1 {
		t.Fatalf("generation %d, want 1", lease.Generation())
	}
	// arrow-rs sees s3cond's generation.
	if held, ok, err := arrow.TryLock(ctx, "k", lakeETag, nil); ok || err != nil || held.Generation != 1 {
		t.Fatalf("arrow-rs try_lock after the takeover: ok=%v, %+v, %v", ok, held, err)
	}
}

func testOtherBucketsAreRefused(t *testing.T, client *dynamodb.Client) {
	c, _ := arrowRSKeyed(t, client, dynamostore.KeyFormatArrowRS, shortWait)
	_, err := c.Acquire(testContext(t, 10*time.Second), "other/k", "*", nil)
	if !errors.Is(err, dynamostore.ErrOtherBucket) {
		t.Fatalf("Acquire on another bucket: %v, want ErrOtherBucket", err)
	}
	// Reads of other paths still reach the table (the readiness probe's).
	plain := newDynamoTable(t, client)
	keyed := dynamostore.New(client, plain.Name(), dynamostore.WithArrowRSKeys("lake"))
	if r, err := keyed.Get(testContext(t, 10*time.Second), "s3cond-readiness-probe/", "*"); r != nil || err != nil {
		t.Fatalf("Get of another bucket's path: %+v, %v; want no row, no error", r, err)
	}
	gone := dynamostore.New(client, "no-such-table", dynamostore.WithArrowRSKeys("lake"))
	if _, err := gone.Get(testContext(t, 10*time.Second), "s3cond-readiness-probe/", "*"); err == nil {
		t.Fatal("Get on a missing table succeeded: the readiness probe would not notice")
	}
}

// The control: keyed "<bucket>/<key>", s3cond and arrow-rs never meet, and
// both hold a lock on the same object at once.
func testBucketKeyFormatDoesNotMeetArrowRS(t *testing.T, client *dynamodb.Client) {
	c, arrow := arrowRSKeyed(t, client, dynamostore.KeyFormatBucketKey, shortWait)
	ctx := testContext(t, 20*time.Second)
	if _, ok, err := arrow.TryLock(ctx, "k", "", nil); !ok || err != nil {
		t.Fatalf("arrow-rs try_lock: ok=%v, %v", ok, err)
	}
	if _, err := c.Acquire(ctx, "lake/k", "*", nil); err != nil {
		t.Fatalf("s3cond Acquire in bucket-key format: %v; want it granted (the rows differ)", err)
	}
}

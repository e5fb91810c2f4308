package dynamolease_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/tabletest"
	"github.com/s3cond/s3cond/internal/testservers"
)

func testContext(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestMemTableConformance(t *testing.T) {
	tabletest.Run(t, func(t *testing.T) dynamolease.Table { return dynamolease.NewMemTable() })
}

func openBolt(t testing.TB, path string) *dynamolease.BoltTable {
	t.Helper()
	tbl, err := dynamolease.OpenBolt(path, dynamolease.BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tbl.Close() })
	return tbl
}

func TestBoltTableConformance(t *testing.T) {
	tabletest.Run(t, func(t *testing.T) dynamolease.Table {
		return openBolt(t, filepath.Join(t.TempDir(), "leases.db"))
	})
}

func TestBoltSecondOpenFailsClearly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	openBolt(t, path)
	start := time.Now()
	second, err := dynamolease.OpenBolt(path, dynamolease.BoltOptions{})
	if err == nil {
		_ = second.Close()
		t.Fatal("second OpenBolt on a file in use succeeded")
	}
	if !strings.Contains(err.Error(), "another process holds it") {
		t.Fatalf("error does not say the file is in use: %v", err)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Fatalf("second OpenBolt took %s to fail", waited)
	}
}

// A restarted process must honour the leases its predecessor held.
func TestBoltLeaseSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	opts := dynamolease.Options{Timeout: 10 * time.Second, PollInterval: 10 * time.Millisecond, WaitBudget: 150 * time.Millisecond}
	first, err := dynamolease.OpenBolt(path, dynamolease.BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dynamolease.NewCommitter(first, opts, zerolog.Nop()).Acquire(testContext(t, 5*time.Second), "b/k", "*", nil); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil { // the process stops without releasing
		t.Fatal(err)
	}
	again := openBolt(t, path)
	_, err = dynamolease.NewCommitter(again, opts, zerolog.Nop()).Acquire(testContext(t, 5*time.Second), "b/k", "*", nil)
	if !errors.Is(err, dynamolease.ErrWaitBudgetExceeded) {
		t.Fatalf("Acquire after restart = %v, want ErrWaitBudgetExceeded (the old lease is live)", err)
	}
}

func TestBoltExpiredRowsAreSweptAndRecreatable(t *testing.T) {
	tbl := openBolt(t, filepath.Join(t.TempDir(), "leases.db"))
	ctx := testContext(t, 5*time.Second)
	old := dynamolease.Record{Path: "b/old", ETag: "*", Timeout: time.Second, TTL: time.Now().Add(-time.Hour)}
	live := dynamolease.Record{Path: "b/live", ETag: "*", Timeout: time.Second, TTL: time.Now().Add(time.Hour)}
	for _, r := range []dynamolease.Record{old, live} {
		if _, err := tbl.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	// As after DynamoDB's TTL removed it: a Create succeeds.
	if _, err := tbl.Create(ctx, dynamolease.Record{Path: "b/old", ETag: "*", Generation: 0, Owner: "new",
		Timeout: time.Second, TTL: time.Now().Add(-time.Minute)}); err != nil {
		t.Fatalf("Create over an expired row: %v", err)
	}
	n, err := tbl.Sweep(ctx, time.Now())
	if err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v; want 1 row deleted", n, err)
	}
	if r, _ := tbl.Get(ctx, "b/old", "*"); r != nil {
		t.Fatalf("expired row still there: %+v", *r)
	}
	if r, _ := tbl.Get(ctx, "b/live", "*"); r == nil {
		t.Fatal("live row was swept")
	}
}

func dynamoClient(t testing.TB, endpoint string) *dynamodb.Client {
	t.Helper()
	client, err := dynamolease.NewDynamoClient(testContext(t, 10*time.Second), "us-east-1", endpoint,
		credentials.NewStaticCredentialsProvider("testing", "testing", ""))
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// newDynamoTable creates a fresh table on the server; tables are cheap and
// keep subtests apart.
func newDynamoTable(t *testing.T, client *dynamodb.Client) *dynamolease.DynamoTable {
	t.Helper()
	name := fmt.Sprintf("leases-%d", time.Now().UnixNano())
	err := dynamolease.CreateTable(testContext(t, 30*time.Second), client, name)
	if err != nil && !errors.Is(err, dynamolease.ErrTTLUnavailable) {
		t.Fatal(err)
	}
	return dynamolease.NewDynamoTable(client, name)
}

func TestDynamoOnMoto(t *testing.T) {
	client := dynamoClient(t, testservers.StartMoto(t))
	t.Run("Conformance", func(t *testing.T) {
		tbl := newDynamoTable(t, client)
		tabletest.Run(t, func(t *testing.T) dynamolease.Table { return tbl })
	})
	t.Run("ConformanceArrowRSKeys", func(t *testing.T) {
		// The conformance paths are all in bucket "bucket".
		plain := newDynamoTable(t, client)
		tbl := dynamolease.NewDynamoTable(client, plain.Name(), dynamolease.WithArrowRSKeys("bucket"))
		tabletest.Run(t, func(t *testing.T) dynamolease.Table { return tbl })
	})
	t.Run("CreateTableIsIdempotentAndEnablesTTL", func(t *testing.T) {
		ctx := testContext(t, 30*time.Second)
		name := "leases-idempotent"
		for i := range 2 {
			if err := dynamolease.CreateTable(ctx, client, name); err != nil {
				t.Fatalf("CreateTable #%d: %v", i+1, err)
			}
		}
		desc, err := client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		if got := aws.ToString(desc.TimeToLiveDescription.AttributeName); got != "ttl" ||
			desc.TimeToLiveDescription.TimeToLiveStatus != types.TimeToLiveStatusEnabled {
			t.Fatalf("TTL = %q %s, want ttl ENABLED", got, desc.TimeToLiveDescription.TimeToLiveStatus)
		}
	})
	t.Run("ArrowRsRecordIsHonoured", func(t *testing.T) {
		plain := newDynamoTable(t, client)
		testArrowRsRecord(t, client, dynamolease.NewDynamoTable(client, plain.Name(), dynamolease.WithArrowRSKeys("bucket")))
	})
}

func TestDynamoOnDynalite(t *testing.T) {
	client := dynamoClient(t, testservers.StartDynalite(t))
	t.Run("Conformance", func(t *testing.T) {
		tbl := newDynamoTable(t, client)
		tabletest.Run(t, func(t *testing.T) dynamolease.Table { return tbl })
	})
	t.Run("CreateTableWithoutTTLWarns", func(t *testing.T) {
		err := dynamolease.CreateTable(testContext(t, 30*time.Second), client, "leases-nottl")
		if !errors.Is(err, dynamolease.ErrTTLUnavailable) {
			t.Fatalf("CreateTable on dynalite = %v, want ErrTTLUnavailable (it has no UpdateTimeToLive)", err)
		}
	})
}

// testArrowRsRecord writes exactly the item arrow-rs's DynamoCommit writes
// for a create of "arrow" in bucket "bucket" (its path carries no bucket)
// and checks, on a table keyed in arrow-rs format, that a Committer waits on it and takes it over
// only after timeout × skew.
func testArrowRsRecord(t *testing.T, client *dynamodb.Client, tbl *dynamolease.DynamoTable) {
	ctx := testContext(t, 30*time.Second)
	const rowTimeout = 400 * time.Millisecond
	name := tbl.Name()
	_, err := client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(name),
		Item: map[string]types.AttributeValue{
			"path":       &types.AttributeValueMemberS{Value: "arrow"},
			"etag":       &types.AttributeValueMemberS{Value: "*"},
			"generation": &types.AttributeValueMemberN{Value: "0"},
			"timeout":    &types.AttributeValueMemberN{Value: fmt.Sprint(rowTimeout.Milliseconds())},
			"ttl":        &types.AttributeValueMemberN{Value: fmt.Sprint(time.Now().Add(time.Hour).Unix())},
		},
		ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
		ExpressionAttributeNames: map[string]string{"#pk": "path"},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := tbl.Get(ctx, "bucket/arrow", "*")
	if err != nil || got == nil || got.Generation != 0 || got.Timeout != rowTimeout || got.Released || got.Owner != "" {
		t.Fatalf("arrow-rs row reads as %+v, %v", got, err)
	}

	const skew = 2
	c := dynamolease.NewCommitter(tbl, dynamolease.Options{
		Timeout: 5 * time.Second, MaxClockSkewRate: skew, PollInterval: 50 * time.Millisecond, WaitBudget: 10 * time.Second,
	}, zerolog.Nop())
	start := time.Now()
	checks := 0
	lease, err := c.Acquire(ctx, "bucket/arrow", "*", func(context.Context) error { checks++; return nil })
	waited := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if waited < skew*rowTimeout {
		t.Fatalf("took the arrow-rs lease over after %s, before its timeout × skew (%s)", waited, skew*rowTimeout)
	}
	if waited > skew*rowTimeout+2*time.Second {
		t.Fatalf("took the arrow-rs lease over only after %s", waited)
	}
	if lease.Generation() != 1 {
		t.Fatalf("generation after takeover = %d, want 1 (arrow-rs's next generation)", lease.Generation())
	}
	if checks < 2 {
		t.Fatalf("precondition checked %d times while waiting and after, want at least 2", checks)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	row, err := tbl.Get(ctx, "bucket/arrow", "*")
	if err != nil || row == nil || row.Generation != 1 || !row.Released {
		t.Fatalf("row after release = %+v, %v; want generation 1, released", row, err)
	}
}

func TestDynamoUnreachableIsStoreErrorQuickly(t *testing.T) {
	endpoint := "http://" + testservers.FreeAddr(t) // nothing listens there
	tbl := dynamolease.NewDynamoTable(dynamoClient(t, endpoint), "leases", dynamolease.WithCallTimeout(time.Second))
	c := dynamolease.NewCommitter(tbl, dynamolease.Options{}, zerolog.Nop())
	start := time.Now()
	_, err := c.Acquire(testContext(t, 10*time.Second), "b/k", "*", nil)
	var storeErr *dynamolease.StoreError
	if !errors.As(err, &storeErr) {
		t.Fatalf("Acquire against an unreachable table = %v, want *StoreError", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("failing took %s", took)
	}
}

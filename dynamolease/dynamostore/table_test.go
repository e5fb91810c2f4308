package dynamostore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/dynamostore"
	"github.com/s3cond/s3cond/dynamolease/tabletest"
	"github.com/s3cond/s3cond/internal/testservers"
)

func testContext(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func dynamoClient(t testing.TB, endpoint string) *dynamodb.Client {
	t.Helper()
	client, err := dynamostore.NewClient(testContext(t, 10*time.Second), "us-east-1", endpoint,
		credentials.NewStaticCredentialsProvider("testing", "testing", ""))
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// newDynamoTable creates a fresh table on the server; tables are cheap and
// keep subtests apart.
func newDynamoTable(t *testing.T, client *dynamodb.Client) *dynamostore.Table {
	t.Helper()
	name := fmt.Sprintf("leases-%d", time.Now().UnixNano())
	err := dynamostore.CreateTable(testContext(t, 30*time.Second), client, name)
	if err != nil && !errors.Is(err, dynamostore.ErrTTLUnavailable) {
		t.Fatal(err)
	}
	return dynamostore.New(client, name)
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
		tbl := dynamostore.New(client, plain.Name(), dynamostore.WithArrowRSKeys("bucket"))
		tabletest.Run(t, func(t *testing.T) dynamolease.Table { return tbl })
	})
	t.Run("CreateTableIsIdempotentAndEnablesTTL", func(t *testing.T) {
		ctx := testContext(t, 30*time.Second)
		name := "leases-idempotent"
		for i := range 2 {
			if err := dynamostore.CreateTable(ctx, client, name); err != nil {
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
		testArrowRsRecord(t, client, dynamostore.New(client, plain.Name(), dynamostore.WithArrowRSKeys("bucket")))
	})
}

func TestDynamoOnDynalite(t *testing.T) {
	client := dynamoClient(t, testservers.StartDynalite(t))
	t.Run("Conformance", func(t *testing.T) {
		tbl := newDynamoTable(t, client)
		tabletest.Run(t, func(t *testing.T) dynamolease.Table { return tbl })
	})
	t.Run("CreateTableWithoutTTLWarns", func(t *testing.T) {
		err := dynamostore.CreateTable(testContext(t, 30*time.Second), client, "leases-nottl")
		if !errors.Is(err, dynamostore.ErrTTLUnavailable) {
			t.Fatalf("CreateTable on dynalite = %v, want ErrTTLUnavailable (it has no UpdateTimeToLive)", err)
		}
	})
}

// testArrowRsRecord writes exactly the item arrow-rs's DynamoCommit writes for
// a create of "arrow" in bucket "bucket" (its path carries no bucket) and
// checks, on a table keyed in arrow-rs format, that a Committer waits on it and
// takes it over only after timeout × skew.
func testArrowRsRecord(t *testing.T, client *dynamodb.Client, tbl *dynamostore.Table) {
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
	tbl := dynamostore.New(dynamoClient(t, endpoint), "leases", dynamostore.WithCallTimeout(time.Second))
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

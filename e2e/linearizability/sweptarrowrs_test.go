package linearizability

import (
	"bytes"
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/dynamolease/dynamostore"
	"github.com/s3cond/s3cond/e2e"
	"github.com/s3cond/s3cond/internal/arrowrs"
)

// sweptArrowRSCluster is one s3cond sharing its DynamoDB lease table (moto)
// with arrow-rs writers (key_format: arrow-rs), with the swept-row lease
// settings.
func sweptArrowRSCluster(t *testing.T, buildTags string) *Cluster {
	return NewCluster(t, ClusterOptions{DynamoDB: true, Moto: sharedMoto(t), Table: uniqueTable(), BuildTags: buildTags,
		Env: []string{
			"S3COND_LEASE_DYNAMODB_KEY_FORMAT=arrow-rs", "S3COND_LEASE_DYNAMODB_BUCKET=" + testBucket,
			"S3COND_LEASE_TIMEOUT=" + sweptTimeout.String(),
			"S3COND_LEASE_MAX_CLOCK_SKEW_RATE=" + strconv.Itoa(sweptSkew),
			"S3COND_LEASE_POLL_INTERVAL=" + sweptPoll.String(),
			"S3COND_LEASE_TTL=" + sweptTTL.String(),
			"S3COND_LEASE_WAIT_BUDGET=" + sweptWaitBudget.String(),
		}})
}

// recordSweptArrowRSRow plays the swept-row scenario with arrow-rs writers
// (internal/arrowrs replays their DynamoDB requests), whose rows are all
// born at generation 0 with no owner: one takes k's lock and dies; the
// s3cond waiter arrives so that its takeover falls due just after that
// row's TTL; once the waiter has polled for the last time the row is
// swept; a second arrow-rs writer locks k anew, finds k absent, and writes
// it under its lock once the waiter has answered.
func recordSweptArrowRSRow(t *testing.T, c *Cluster) *Recorder {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ddb, err := dynamostore.NewClient(ctx, e2e.Region, c.Moto.Endpoint, credentials.NewStaticCredentialsProvider("testing", "testing", ""))
	if err != nil {
		t.Fatal(err)
	}
	arrow := arrowrs.New(ddb, c.Config.Lease.DynamoDB.Table)
	arrow.Timeout, arrow.TTL = sweptTimeout, sweptTTL
	rec := NewRecorder()
	rec.Invoke(holderClient, Input{Kind: OpCreate, Key: "k", Value: "dead-arrow-rs"}) // never returns
	if _, ok, err := arrow.TryLock(ctx, "k", "", nil); !ok || err != nil {
		t.Fatalf("the first arrow-rs writer's try_lock: ok=%v, %v", ok, err)
	}
	table := newLeaseTableClient(c)
	ttl := table.onlyRowTTL(t)
	arrival, waiter := waitThenSweep(t, c, rec, table, 0, ttl)

	next := rec.Invoke(2, Input{Kind: OpCreate, Key: "k", Value: "arrow-rs"})
	if _, ok, err := arrow.TryLock(ctx, "k", "", nil); !ok || err != nil {
		t.Fatalf("the second arrow-rs writer's try_lock after the sweep: ok=%v, %v", ok, err)
	}
	if _, found := backendValue(t, c, "k"); found {
		t.Fatal("k exists before the second arrow-rs writer's create: the scenario did not happen")
	}
	if due := arrival.Add(sweptTakeover); time.Now().After(due) {
		t.Fatalf("arrow-rs locked k %s after the waiter's takeover fell due: the scenario did not happen", time.Since(due))
	}
	t.Logf("the waiter of the swept row: %s", <-waiter)
	store := e2e.NewS3Client(c.Store.Endpoint, c.Store.Cred, nil)
	_, err = store.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(c.Bucket), Key: aws.String("k"), Body: bytes.NewReader(Body("arrow-rs", 64))})
	if err != nil {
		t.Fatalf("the second arrow-rs writer's write under its lock: %v", err)
	}
	next.Return(Output{Outcome: OutcomeOK})

	get := rec.Invoke(3, Input{Kind: OpGet, Key: "k"})
	value, _ := backendValue(t, c, "k")
	get.Return(Output{Outcome: OutcomeOK, Value: value})
	t.Logf("history: %s; k holds %q", rec.Stats(), value)
	return rec
}

// TestLinearizableWhenAnArrowRSRowIsSweptWhileWaitedOn: s3cond's waiter
// never takes the lock of an arrow-rs writer that locked k after the
// waiter's last poll, though both rows were born at generation 0.
func TestLinearizableWhenAnArrowRSRowIsSweptWhileWaitedOn(t *testing.T) {
	t.Parallel()
	RequireLinearizable(t, recordSweptArrowRSRow(t, sweptArrowRSCluster(t, "")))
}

// TestNegativeControlGenerationOnlyTakeoverOfArrowRSRows: the same with
// takeovers conditioned on the generation alone must be caught.
func TestNegativeControlGenerationOnlyTakeoverOfArrowRSRows(t *testing.T) {
	t.Parallel()
	rec := recordSweptArrowRSRow(t, sweptArrowRSCluster(t, unsafeGenerationOnlyTakeover))
	requireIllegal(t, rec, "arrow-rs rows taken over on the generation alone")
}

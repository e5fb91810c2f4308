package linearizability

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/s3cond/s3cond/e2e"
	"github.com/s3cond/s3cond/internal/testkit"
)

// Lease settings of the swept-row scenario: a waiter reads a held row when
// it arrives and at each poll, and its takeover falls due timeout × skew
// after it first saw the row, a second after its last poll (polls that
// fell on the due time would read the table afresh); a row's TTL is the
// shortest s3cond accepts above that wait.
const (
	sweptTimeout    = 4 * time.Second
	sweptSkew       = 2
	sweptPoll       = 3 * time.Second
	sweptTakeover   = sweptTimeout * sweptSkew
	sweptTTL        = sweptTakeover + time.Second
	sweptWaitBudget = sweptTakeover + 4*time.Second
	// sweptPolls is how many polls the waiter makes before its takeover.
	sweptPolls = int64(sweptTakeover / sweptPoll)
	// sweptLastPoll is how long before the dead row's TTL the waiter's
	// last poll comes; its takeover is due takeover - polls × poll later.
	sweptLastPoll = 500 * time.Millisecond
)

// unsafeGenerationZero is the build tag of dynamolease's deliberately
// unsafe creates: every row born at generation 0.
const unsafeGenerationZero = "s3cond_unsafe_generation_zero"

// sweptRowCluster is three s3cond processes on one DynamoDB lease table
// (moto) in front of versitygw, with backend traffic through a delay
// proxy. s3cond enforces the conditions itself (lease mode) and sends the
// store none, so only its leases order the creates.
func sweptRowCluster(t *testing.T, buildTags string) *Cluster {
	return sweptRowFleet(t, ClusterOptions{BuildTags: buildTags})
}

// sweptRowFleet is sweptRowCluster with opts' build tags (per process, for
// a mixed fleet) and extra environment.
func sweptRowFleet(t *testing.T, opts ClusterOptions) *Cluster {
	return NewCluster(t, ClusterOptions{Proxies: 3, DynamoDB: true, Moto: sharedMoto(t), Table: uniqueTable(),
		DelayBackend: true, BuildTags: opts.BuildTags, ProxyBuildTags: opts.ProxyBuildTags, Env: append([]string{
			"S3COND_LEASE_TIMEOUT=" + sweptTimeout.String(),
			"S3COND_LEASE_MAX_CLOCK_SKEW_RATE=" + strconv.Itoa(sweptSkew),
			"S3COND_LEASE_POLL_INTERVAL=" + sweptPoll.String(),
			"S3COND_LEASE_TTL=" + sweptTTL.String(),
			"S3COND_LEASE_WAIT_BUDGET=" + sweptWaitBudget.String(),
		}, opts.Env...)})
}

// recordSweptRow plays the scenario and returns its history: proxy 0 takes
// the create lease of k and is SIGKILLed; a waiter on proxy 1 arrives so
// that its takeover falls due just after the dead row's TTL; once the
// waiter has read the row for the last time and the TTL has passed, the
// row is swept, as DynamoDB's TTL sweep may do at any moment after it;
// proxy 2 creates k anew and holds its lease (its write held at the
// store) while the waiter's takeover falls due.
func recordSweptRow(t *testing.T, c *Cluster) *Recorder {
	t.Helper()
	rec := NewRecorder()
	rec.Invoke(holderClient, Input{Kind: OpCreate, Key: "k", Value: "holder"}) // never returns
	killHolder(t, c, "k")
	table := newLeaseTableClient(c)
	ttl := table.onlyRowTTL(t)

	arrival, waiter := waitThenSweep(t, c, rec, table, 1, ttl)

	next := rec.Invoke(2, Input{Kind: OpCreate, Key: "k", Value: "next"})
	upload := StartHeldUpload(context.Background(), c.Proxies[2].Endpoint, c.Cred, c.Bucket, "k",
		http.Header{"If-None-Match": {"*"}}, Body("next", heldBodySize), heldBodySize/2, c.Delay)
	held, err := upload.HoldAtBackend(c.Delay, 10*time.Second)
	if err != nil {
		t.Fatalf("hold the new holder's create at the store: %v", err)
	}
	due := arrival.Add(sweptTakeover)
	if time.Now().After(due) {
		t.Fatalf("the new holder took the lease %s after the waiter's takeover fell due: the scenario did not happen", time.Since(due))
	}
	t.Logf("the new holder holds k's lease %s before the waiter's takeover falls due", time.Until(due).Round(time.Millisecond))
	outcome := <-waiter
	t.Logf("the waiter of the swept row: %s", outcome)
	held.Resume()
	resp, err := upload.Wait(15 * time.Second)
	next.Return(Output{Outcome: rawOutcome(resp, err)})

	get := rec.Invoke(3, Input{Kind: OpGet, Key: "k"})
	value, found := backendValue(t, c, "k")
	if found {
		get.Return(Output{Outcome: OutcomeOK, Value: value})
	} else {
		get.Return(Output{Outcome: OutcomeNotFound})
	}
	t.Logf("history: %s; k holds %q", rec.Stats(), value)
	return rec
}

// TestLinearizableWhenARowIsSweptWhileWaitedOn: a waiter whose takeover
// falls due after the dead row it watched was swept and created anew does
// not take the new holder's lease: only one of the two creates succeeds.
func TestLinearizableWhenARowIsSweptWhileWaitedOn(t *testing.T) {
	t.Parallel() // seconds of waiting for the lease settings
	rec := recordSweptRow(t, sweptRowCluster(t, ""))
	RequireLinearizable(t, rec)
}

// rawOutcome classifies a hand-sent PUT's answer.
func rawOutcome(resp *e2e.RawResponse, err error) Outcome {
	switch {
	case err != nil || resp == nil:
		return OutcomeAmbiguous
	case resp.Status == http.StatusOK:
		return OutcomeOK
	case resp.Status == http.StatusPreconditionFailed:
		return OutcomePreconditionFailed
	case resp.Status == http.StatusConflict:
		return OutcomeConflict
	}
	return OutcomeAmbiguous
}

// leaseCalls reads from an s3cond's /metrics how many lease table calls
// of one operation (create, get, replace) it has made.
func leaseCalls(t *testing.T, admin, op string) int64 {
	t.Helper()
	return scrapeCounts(t, "http://"+admin+"/metrics", `s3cond_lease_store_call_duration_seconds_count{op="`+op+`"}`)[0]
}

// leaseTableClient reads and sweeps the cluster's lease table on moto
// directly, as DynamoDB's TTL sweep does.
type leaseTableClient struct {
	client *dynamodb.Client
	table  string
}

func newLeaseTableClient(c *Cluster) *leaseTableClient {
	client := dynamodb.New(dynamodb.Options{Region: e2e.Region, BaseEndpoint: aws.String(c.Moto.Endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("testing", "testing", "")})
	return &leaseTableClient{client: client, table: c.Config.Lease.DynamoDB.Table}
}

func (l *leaseTableClient) scan(t *testing.T) []map[string]types.AttributeValue {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := l.client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(l.table), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatalf("scan the lease table: %v", err)
	}
	return out.Items
}

// onlyRowTTL is the TTL of the table's one row (the dead holder's).
func (l *leaseTableClient) onlyRowTTL(t *testing.T) time.Time {
	t.Helper()
	items := l.scan(t)
	if len(items) != 1 {
		t.Fatalf("the lease table holds %d rows, want the dead holder's", len(items))
	}
	ttl, ok := items[0]["ttl"].(*types.AttributeValueMemberN)
	if !ok {
		t.Fatalf("the dead holder's row has no ttl: %v", items[0])
	}
	epoch, err := strconv.ParseInt(ttl.Value, 10, 64)
	if err != nil {
		t.Fatalf("the dead holder's row ttl %q: %v", ttl.Value, err)
	}
	return time.Unix(epoch, 0)
}

// sweep deletes every row whose TTL has passed, and fails the test if none did.
func (l *leaseTableClient) sweep(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	swept := 0
	for _, item := range l.scan(t) {
		ttl, _ := item["ttl"].(*types.AttributeValueMemberN)
		if epoch, err := strconv.ParseInt(ttl.Value, 10, 64); err != nil || time.Unix(epoch, 0).After(time.Now()) {
			continue
		}
		key := map[string]types.AttributeValue{"path": item["path"], "etag": item["etag"]}
		if _, err := l.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(l.table), Key: key}); err != nil {
			t.Fatalf("sweep a lease row: %v", err)
		}
		swept++
	}
	if swept == 0 {
		t.Fatal("no lease row's TTL had passed: nothing to sweep")
	}
}

// waitThenSweep starts a waiter's create of k on proxy, timed so that its
// polls of the dead row end just before the row's TTL and its takeover
// falls due a little after it; once it has polled for the last time and
// the TTL has passed, the row is swept, as DynamoDB's TTL sweep may do at
// any moment after it. It returns the waiter's arrival and its outcome.
// The two sleeps shape the scenario against the row's TTL; the order of
// events is waited for (the waiter's polls, from its metrics).
func waitThenSweep(t *testing.T, c *Cluster, rec *Recorder, table *leaseTableClient, proxy int, ttl time.Time) (time.Time, <-chan Outcome) {
	t.Helper()
	arrival := ttl.Add(-time.Duration(sweptPolls)*sweptPoll - sweptLastPoll)
	time.Sleep(time.Until(arrival))
	reads := leaseCalls(t, c.AdminAddrs[proxy], "get")
	waiter := make(chan Outcome, 1)
	waiterOp := rec.Invoke(proxy, Input{Kind: OpCreate, Key: "k", Value: "waiter"})
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), sweptWaitBudget+10*time.Second)
		defer cancel()
		outcome, _ := classify(create(ctx, c.Client(proxy, sweptWaitBudget+10*time.Second), c.Bucket, "k", "waiter"))
		waiterOp.Return(Output{Outcome: outcome})
		waiter <- outcome
	}()
	testkit.Within(t, time.Duration(sweptPolls+1)*sweptPoll, "the waiter's polls of the dead row", func(context.Context) error {
		if n := leaseCalls(t, c.AdminAddrs[proxy], "get"); n < reads+sweptPolls {
			return fmt.Errorf("proxy %d read the lease table %d times, want %d polls", proxy, n-reads, sweptPolls)
		}
		return nil
	})
	time.Sleep(time.Until(ttl.Add(100 * time.Millisecond)))
	table.sweep(t)
	return arrival, waiter
}

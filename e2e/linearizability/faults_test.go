package linearizability

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/e2e"
	"github.com/s3cond/s3cond/internal/testkit"
)

// Each test here injects one fault and checks the outcome the contract
// promises for it (SPEC §2–§3), request by request.

// takeover is how long a waiter honours a lease whose holder went silent.
const takeover = LeaseTimeout * SkewRate

// longLease is the lease timeout of the tests that check no lease is left
// held: a leftover lease would make the next create wait longLease × skew,
// far beyond the wait budget, so it would get 409 ConditionalRequestConflict
// whatever the machine's load — success proves the lease was released.
const longLease = 10 * time.Second

func create(ctx context.Context, client *s3.Client, bucket, key, value string) error {
	_, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key),
		Body: bytesReader(Body(value, 64)), IfNoneMatch: aws.String("*")})
	return err
}

func timedCreate(t *testing.T, client *s3.Client, bucket, key, value string) (time.Duration, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	start := time.Now()
	err := create(ctx, client, bucket, key, value)
	return time.Since(start), err
}

// backendValue reads key straight from the store: what was really stored.
func backendValue(t *testing.T, c *Cluster, key string) (string, bool) {
	t.Helper()
	client := e2e.NewS3Client(c.Store.Endpoint, c.Store.Cred, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(c.Bucket), Key: aws.String(key)})
	if e2e.HTTPStatus(err) == http.StatusNotFound {
		return "", false
	}
	if err != nil {
		t.Fatalf("read %s from the backend: %v", key, err)
	}
	defer out.Body.Close()
	body, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatalf("read %s from the backend: %v", key, err)
	}
	v, _ := ValueOf(body)
	return v, true
}

// requireCreateWithoutLeftoverLease creates key and requires success: with
// longLease, a lease left held by an earlier failed write would answer 409.
func requireCreateWithoutLeftoverLease(t *testing.T, client *s3.Client, bucket, key, value string) {
	t.Helper()
	took, err := timedCreate(t, client, bucket, key, value)
	if err != nil {
		t.Fatalf("create %s after the fault: %v after %s (409 means a lease was left held)", key, err, took)
	}
	t.Logf("create %s after the fault succeeded in %s", key, took)
}

func requireBackendValue(t *testing.T, c *Cluster, key, want string) {
	t.Helper()
	got, ok := backendValue(t, c, key)
	switch {
	case want == "" && ok:
		t.Fatalf("backend stored %s=%q; want nothing", key, got)
	case want != "" && got != want:
		t.Fatalf("backend holds %s=%q (exists %v); want %q", key, got, ok, want)
	}
}

// rawConditionalPut sends If-None-Match: * by hand, to see the error XML.
func rawConditionalPut(t *testing.T, c *Cluster, key string) *e2e.RawResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	body := Body("raw", 64)
	resp, err := e2e.DoContext(ctx, c.Proxies[0].Endpoint, c.Cred, e2e.RawRequest{Method: http.MethodPut,
		Path: "/" + c.Bucket + "/" + key, Header: http.Header{"If-None-Match": {"*"}}, Body: body})
	if err != nil {
		t.Fatalf("conditional PUT %s: %v", key, err)
	}
	return resp
}

// requireGatewayError checks an S3-style 502/503 XML error.
func requireGatewayError(t *testing.T, what string, resp *e2e.RawResponse) {
	t.Helper()
	if resp.Status != http.StatusBadGateway && resp.Status != http.StatusServiceUnavailable {
		t.Fatalf("%s: status %d, want 502 or 503: %s", what, resp.Status, resp.Body)
	}
	doc, err := resp.Error()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if doc.Code == "" || doc.RequestID == "" {
		t.Fatalf("%s: error document without code or request ID: %+v", what, doc)
	}
	t.Logf("%s: %d %s", what, resp.Status, doc.Code)
}

func TestLeaseStoreDown(t *testing.T) {
	c := NewCluster(t, ClusterOptions{DynamoDB: true, LeaseTimeout: longLease}) // its own moto: killed below
	client := c.Client(0, 15*time.Second)
	etag := putValue(t, client, c.Bucket, "existing", "v1", 64)

	c.Moto.Kill()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	err := create(ctx, client, c.Bucket, "fresh", "never")
	e2e.RequireS3Error(t, err, http.StatusServiceUnavailable, "ServiceUnavailable")
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("the conditional write took %s to fail with the lease store down; want < 10s", took)
	}
	_, err = client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(c.Bucket), Key: aws.String("existing"),
		Body: bytesReader(Body("v2", 64)), IfMatch: aws.String(etag)})
	e2e.RequireS3Error(t, err, http.StatusServiceUnavailable, "ServiceUnavailable")
	requireBackendValue(t, c, "fresh", "")
	requireBackendValue(t, c, "existing", "v1")

	// Unconditional traffic does not need the lease store.
	putValue(t, client, c.Bucket, "plain", "p1", 64)
	if _, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(c.Bucket), Key: aws.String("plain")}); err != nil {
		t.Fatalf("GET with the lease store down: %v", err)
	}

	c.Moto.Start(t)
	c.CreateLeaseTable(t)
	// No step on s3cond: its next conditional write just works.
	requireCreateWithoutLeftoverLease(t, client, c.Bucket, "fresh", "after")
	requireBackendValue(t, c, "fresh", "after")
}

func TestBackendResettingAnswersGatewayErrorAndHoldsNoLease(t *testing.T) {
	c := NewCluster(t, ClusterOptions{DelayBackend: true, LeaseTimeout: longLease})
	client := c.Client(0, 15*time.Second)

	c.Delay.SetResetting(true)
	requireGatewayError(t, "conditional PUT, backend resetting", rawConditionalPut(t, c, "k"))
	c.Delay.SetResetting(false)
	requireCreateWithoutLeftoverLease(t, client, c.Bucket, "k", "first")
}

// TestBackendResetAfterTheWholeBodyLeavesTheLeaseToExpire: the backend
// connection breaks after s3cond took the lease and sent the whole body.
// The final bytes may or may not have reached the store (here the delay
// proxy dropped them), so s3cond cannot know whether the write committed:
// the client gets a gateway error, and the lease is not released but left
// to expire, so a create right after is refused (409), never told 200 and
// then overwritten by a late commit.
func TestBackendResetAfterTheWholeBodyLeavesTheLeaseToExpire(t *testing.T) {
	c := NewCluster(t, ClusterOptions{DelayBackend: true, LeaseTimeout: longLease})
	client := c.Client(0, 15*time.Second)
	upload := StartHeldUpload(context.Background(), c.Proxies[0].Endpoint, c.Cred, c.Bucket, "k2",
		http.Header{"If-None-Match": {"*"}}, Body("held", heldBodySize), heldBodySize/2, c.Delay)
	held, err := upload.HoldAtBackend(c.Delay, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	held.Reset()
	resp, err := upload.Wait(15 * time.Second)
	if err != nil {
		t.Fatalf("the client got no answer when the backend reset: %v", err)
	}
	requireGatewayError(t, "conditional PUT, backend reset mid-write", resp)
	requireBackendValue(t, c, "k2", "")
	took, err := timedCreate(t, client, c.Bucket, "k2", "second")
	e2e.RequireS3Error(t, err, http.StatusConflict, "ConditionalRequestConflict")
	t.Logf("create k2 while the reset write's outcome is unknown: 409 after %s", took)
	requireBackendValue(t, c, "k2", "")
}

func TestBackendDownAnswersGatewayError(t *testing.T) {
	c := NewCluster(t, ClusterOptions{LeaseTimeout: longLease})
	client := c.Client(0, 15*time.Second)
	c.Backend.Process.Stop()
	requireGatewayError(t, "conditional PUT, backend down", rawConditionalPut(t, c, "k"))
	c.Backend.Restart(t)
	requireCreateWithoutLeftoverLease(t, client, c.Bucket, "k", "after")
	requireBackendValue(t, c, "k", "after")
}

func TestClientDisconnectMidUploadStoresNothing(t *testing.T) {
	c := NewCluster(t, ClusterOptions{LeaseTimeout: longLease, DelayBackend: true})
	upload := StartHeldUpload(context.Background(), c.Proxies[0].Endpoint, c.Cred, c.Bucket, "k",
		http.Header{"If-None-Match": {"*"}}, Body("partial", heldBodySize), heldBodySize/2, c.Delay)
	// s3cond streams the first half to the backend.
	conn, err := backendConnCarrying(c.Delay, upload.connsAtStart, heldBodySize/2-1, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	upload.Abandon()
	if _, err := upload.Wait(15 * time.Second); err == nil {
		t.Fatal("the abandoned upload got an answer as if it had completed")
	}
	select { // s3cond notices and aborts the backend request
	case <-conn.Done():
	case <-time.After(15 * time.Second):
		t.Fatal("s3cond kept the abandoned upload's backend connection open")
	}
	requireBackendValue(t, c, "k", "")
	requireCreateWithoutLeftoverLease(t, c.Client(0, 15*time.Second), c.Bucket, "k", "next")
	requireBackendValue(t, c, "k", "next")
}

// killHolder makes proxy 0 take the lease of an If-None-Match: * create of
// key and send the whole body, then SIGKILLs it. The body's final bytes,
// held in the delay proxy, are dropped: the holder's write never lands,
// and the question is only whether its lease is honoured.
func killHolder(t *testing.T, c *Cluster, key string) {
	t.Helper()
	upload := StartHeldUpload(context.Background(), c.Proxies[0].Endpoint, c.Cred, c.Bucket, key,
		http.Header{"If-None-Match": {"*"}}, Body("holder", heldBodySize), heldBodySize/2, c.Delay)
	held, err := upload.HoldAtBackend(c.Delay, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.Proxies[0].Process.Kill()
	held.Reset()
	if _, err := upload.Wait(15 * time.Second); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the killed holder's client: %v; want a broken connection", err)
	}
}

// requireTakeover creates key through client and checks it waited for the
// dead holder's lease (at least timeout × skew) and then succeeded.
func requireTakeover(t *testing.T, c *Cluster, client *s3.Client, key string) {
	t.Helper()
	took, err := timedCreate(t, client, c.Bucket, key, "taker")
	if err != nil {
		t.Fatalf("create after the holder died: %v after %s", err, took)
	}
	t.Logf("took over the dead holder's lease after %s", took)
	if took < takeover-100*time.Millisecond {
		t.Fatalf("the create succeeded after %s, before the holder's lease could expire (timeout × skew = %s)", took, takeover)
	}
	requireBackendValue(t, c, key, "taker")
}

func TestKilledHolderEmbeddedStoreLeaseHonouredAfterRestart(t *testing.T) {
	c := NewCluster(t, ClusterOptions{DelayBackend: true})
	killHolder(t, c, "k")
	c.Proxies[0].Restart(t) // same data_dir: the bbolt file still holds the lease
	requireTakeover(t, c, c.Client(0, 15*time.Second), "k")
}

// After a restart of the machine the embedded lease file may have lost its
// last commits (they are not fsynced), so the restarted process discards it
// and refuses conditional writes with 503 until any lease from before could
// have expired. The restart is simulated by giving the state file beside the
// lease file another boot id.
func TestKilledHolderEmbeddedStoreAfterMachineRestart(t *testing.T) {
	// A longer lease than the other tests': the first request after the
	// restart must still find the wait running on a slow machine.
	const lease = 3 * time.Second
	const recovery = lease * SkewRate
	// No sized lease longer than the plain one: the pause after the
	// restart covers the longest lease that may exist, max(timeout,
	// max_sized_timeout) × skew (issue 33 finding 3), and the default cap of
	// minutes would make this test wait that long.
	c := NewCluster(t, ClusterOptions{DelayBackend: true, LeaseTimeout: lease,
		Env: []string{"S3COND_LEASE_MAX_SIZED_TIMEOUT=" + lease.String()}})
	killHolder(t, c, "k")
	stateFile := filepath.Join(c.DataDirs[0], "leases.db.state")
	if raw, err := os.ReadFile(stateFile); err != nil || !strings.Contains(string(raw), `"synced":false`) {
		t.Fatalf("state file of the killed process: %q, %v; want it open, unsynced", raw, err)
	}
	if err := os.WriteFile(stateFile, []byte(`{"synced":false,"boot_id":"a-boot-before-this-one"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	c.Proxies[0].Restart(t)

	refused := rawConditionalPut(t, c, "other")
	requireGatewayError(t, "conditional PUT right after the machine restart", refused)
	if doc, _ := refused.Error(); doc.Code != "ServiceUnavailable" || !strings.Contains(doc.Message, "restart of the machine") {
		t.Fatalf("conditional PUT right after the machine restart: %s %q, want ServiceUnavailable saying why", doc.Code, doc.Message)
	}
	// Unconditional requests are served meanwhile.
	if _, err := c.Client(0, 15*time.Second).ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(c.Bucket)}); err != nil {
		t.Fatalf("list while conditional writes are refused: %v", err)
	}

	// The restarted process tells nothing: ask it.
	testkit.Within(t, time.Until(restarted.Add(recovery+10*time.Second)), "a conditional write to succeed after the restart",
		func(context.Context) error {
			resp := rawConditionalPut(t, c, "k")
			switch resp.Status {
			case http.StatusOK:
				return nil
			case http.StatusServiceUnavailable:
				return fmt.Errorf("still refused %s after the restart", time.Since(restarted))
			}
			t.Fatalf("conditional PUT while the lease file recovers: %d %s", resp.Status, resp.Body)
			return nil
		})
	if waited := time.Since(restarted); waited < recovery {
		t.Fatalf("a conditional write succeeded %s after the restart, before timeout × skew = %s", waited, recovery)
	}
	requireBackendValue(t, c, "k", "raw")
}

func TestKilledHolderDynamoDBTakenOverByAnotherProcess(t *testing.T) {
	c := NewCluster(t, ClusterOptions{Proxies: 2, DynamoDB: true, Moto: sharedMoto(t), Table: uniqueTable(),
		DelayBackend: true})
	killHolder(t, c, "k")
	requireTakeover(t, c, c.Client(1, 15*time.Second), "k")
}

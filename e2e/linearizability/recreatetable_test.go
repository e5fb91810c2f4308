package linearizability

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/s3cond/s3cond/e2e"
	"github.com/s3cond/s3cond/internal/testservers"
)

// recordRecreatedTable: two s3cond on one DynamoDB lease table (moto);
// proxy 0 holds the sized lease of a copy held on its way to the store
// and is SIGKILLed; the table is deleted (lost with its rows) and the
// operator runs `s3cond leases recreate-table`, which keeps the table
// absent (every s3cond answers 503) for the longest lease the fleet may
// have granted and then creates it. A contender creates the key through
// proxy 1 meanwhile. Returns the history and the contender's last outcome.
func recordRecreatedTable(t *testing.T, buildTags string) (*Recorder, Outcome) {
	t.Helper()
	c := NewCluster(t, ClusterOptions{Proxies: 2, DynamoDB: true, Moto: sharedMoto(t), Table: uniqueTable(),
		DelayBackend: true, BuildTags: buildTags, EditConfig: sizedLeases})
	rec := NewRecorder()
	held := startHeldCopy(t, c, rec, 0, "k")
	c.Proxies[0].Process.Kill()
	if resp := <-held.answer; resp != nil {
		t.Fatalf("the killed holder answered %d", resp.Status)
	}
	deleteLeaseTable(t, c)
	lost := time.Now()
	recreated := make(chan error, 1)
	go func() { recreated <- recreateTable(t, c) }()

	acked := make(chan struct{})
	released := make(chan struct{})
	go func() {
		defer close(released)
		releaseWhenDue(t, c, held, "k", lost, acked)
	}()
	outcome := contend(t, c, rec, 1, "k", acked)
	<-released
	if err := <-recreated; err != nil {
		t.Fatal(err)
	}
	value := recordFinalValue(t, c, rec, "k")
	t.Logf("the contender's create: %s %s after the table was lost; k holds %q; history %s", outcome, time.Since(lost).Round(time.Millisecond), value, rec.Stats())
	return rec, outcome
}

func deleteLeaseTable(t *testing.T, c *Cluster) {
	t.Helper()
	table := newLeaseTableClient(c)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := table.client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(table.table)}); err != nil {
		t.Fatalf("delete the lease table: %v", err)
	}
}

// recreateTable runs `s3cond leases recreate-table` (of the cluster's
// build) with the fleet's config and environment.
func recreateTable(t *testing.T, c *Cluster) error {
	cfg := c.Config
	cfg.Server.Listen = "127.0.0.1:1" // not used by leases recreate-table
	dir, path := e2e.WriteConfigFile(t, cfg)
	bin := c.bin
	if bin == "" {
		bin = testservers.BuildS3cond(t)
	}
	cmd := exec.Command(bin, "leases", "recreate-table", "--config", path, "--yes")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), c.env...)
	out, err := cmd.CombinedOutput()
	t.Logf("s3cond leases recreate-table: %s", out)
	if err != nil {
		return err
	}
	return nil
}

// TestLinearizableAcrossARecreatedLeaseTable: recreate-table keeps writers
// away for max(timeout, max_sized_timeout) × skew, so the lost sized lease
// is covered: the contender gets 503 until the copy landed, then 412.
func TestLinearizableAcrossARecreatedLeaseTable(t *testing.T) {
	t.Parallel()
	rec, outcome := recordRecreatedTable(t, "")
	if outcome != OutcomePreconditionFailed {
		t.Errorf("the contender's create: %s; want 412, the copy having landed while the table was absent", outcome)
	}
	RequireLinearizable(t, rec)
}

// TestNegativeControlPlainLeaseWaitBeforeRecreatingTheTable: recreate-table
// waiting timeout × skew only (the advice before issue 33) lets the
// contender's create be acknowledged before the copy lands over it. The
// checker must find the history not linearizable.
func TestNegativeControlPlainLeaseWaitBeforeRecreatingTheTable(t *testing.T) {
	t.Parallel()
	rec, outcome := recordRecreatedTable(t, unsafePlainLeaseWait)
	if outcome != OutcomeOK {
		t.Fatalf("the contender's create: %s; want it acknowledged after the plain wait", outcome)
	}
	requireIllegal(t, rec, "recreate-table waiting timeout × skew")
}

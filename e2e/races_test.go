package e2e

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/internal/testservers"
)

// raceBackends are the stores the races run on: versitygw enforces the
// conditions itself, s3rver ignores them, so there only s3cond's leases can
// make the races come out right (e2e/s3rver_control_test.go runs the same
// races straight against s3rver and sees them lose writes).
var raceBackends = []BackendKind{BackendVersityGW, BackendS3rver}

// fleetStarter starts three s3cond processes sharing one lease store, in
// front of one store of the given kind, and creates the bucket "race":
// newFleet on dynalite, newEtcdFleet on etcd. The race tests run on each.
type fleetStarter func(t *testing.T, backend BackendKind, opts ...Option) (*Env, []*s3.Client)

// onEachBackend runs race as one subtest per race backend, on fleet.
func onEachBackend(t *testing.T, fleet fleetStarter, race func(t *testing.T, fleet fleetStarter, backend BackendKind)) {
	for _, backend := range raceBackends {
		t.Run(string(backend), func(t *testing.T) { race(t, fleet, backend) })
	}
}

// newFleet starts three s3cond processes sharing one lease table on
// dynalite, in front of one store of the given kind.
func newFleet(t *testing.T, backend BackendKind, opts ...Option) (*Env, []*s3.Client) {
	t.Helper()
	if TargetMode() == ModeDirect {
		t.Skip("races between s3cond processes need s3cond; S3COND_E2E_TARGET=direct runs clients against versitygw")
	}
	e := NewEnv(t, append([]Option{WithBackend(backend), WithDynamoDBLeases(testservers.StartDynalite(t)), WithProxies(3)}, opts...)...)
	var clients []*s3.Client
	for _, p := range e.Proxies {
		clients = append(clients, e.ClientAt(t, p.Endpoint, e.RW))
	}
	CreateBucket(t, clients[0], "race")
	return e, clients
}

// TestRaceCreate: 32 concurrent If-None-Match: * PUTs of different bodies to
// one key, spread over three processes: exactly one wins, the others get 412
// (or 409), and the key holds the winner's body.
func TestRaceCreate(t *testing.T) { onEachBackend(t, newFleet, raceCreate) }

func raceCreate(t *testing.T, fleet fleetStarter, backend BackendKind) {
	e, clients := fleet(t, backend)
	statuses := raceCreates(t, clients, "race", "once", 32)
	winner, counts := -1, map[int]int{}
	for i, s := range statuses {
		counts[s]++
		if s == 200 {
			winner = i
		}
		if s != 200 && s != 412 && s != 409 {
			t.Errorf("writer %d: status %d, want 200, 412 or 409", i, s)
		}
	}
	t.Logf("outcomes: %v", counts)
	if counts[200] != 1 {
		t.Fatalf("%d writers succeeded, want exactly 1: %v", counts[200], counts)
	}
	if got := getBytes(t, t.Context(), e.BackendClient(), "race", "once"); string(got) != fmt.Sprintf("writer %d", winner) {
		t.Fatalf("key holds %q, winner was writer %d", got, winner)
	}
}

// raceCreates sends writers concurrent If-None-Match: * PUTs of "writer i"
// to one key, spread over clients, and returns each writer's HTTP status
// (0 for an error without one, which is also reported).
func raceCreates(t *testing.T, clients []*s3.Client, bucket, key string, writers int) []int {
	t.Helper()
	ctx := t.Context()
	statuses := make([]int, writers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range writers {
		wg.Go(func() {
			<-start
			_, err := clients[i%len(clients)].PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key),
				Body: bytes.NewReader([]byte(fmt.Sprintf("writer %d", i))), IfNoneMatch: aws.String("*")})
			statuses[i] = 200
			if err != nil {
				statuses[i] = HTTPStatus(err)
				if statuses[i] == 0 {
					t.Errorf("writer %d: %v", i, err)
				}
			}
		})
	}
	close(start)
	wg.Wait()
	return statuses
}

// TestRaceCASCounter: workers increment a counter object with read, then
// If-Match PUT, retrying on 412/409; the final value must equal the number
// of successful PUTs (no lost update), give or take the PUTs whose outcome
// the store left unknown (5xx).
func TestRaceCASCounter(t *testing.T) { onEachBackend(t, newFleet, raceCASCounter) }

func raceCASCounter(t *testing.T, fleet fleetStarter, backend BackendKind) {
	e, clients := fleet(t, backend)
	workers, increments := 8, 50
	if testing.Short() {
		increments = 10
	}
	if backend == BackendS3rver {
		// s3rver is one Node process that answers reads racing a write
		// with errors: fewer rounds keep the test short, and the race
		// is just as hot.
		workers, increments = 6, 8
	}
	putBytes(t, t.Context(), clients[0], "race", "counter", []byte("0"))
	res := runCASCounter(t, clients, "race", "counter", workers, increments)
	final, err := strconv.Atoi(string(getBytes(t, t.Context(), e.BackendClient(), "race", "counter")))
	if err != nil {
		t.Fatalf("counter: %v", err)
	}
	t.Logf("%s; counter %d", res, final)
	if res.successes != workers*increments {
		t.Fatalf("%d successful increments, want %d", res.successes, workers*increments)
	}
	if final < res.successes || final > res.successes+res.ambiguous {
		t.Fatalf("counter is %d after %d successful increments and %d of unknown outcome: lost or invented updates",
			final, res.successes, res.ambiguous)
	}
}

// casCounterResult is what a CAS counter run saw.
type casCounterResult struct {
	successes, conflicts, ambiguous, failedReads int
	took                                         time.Duration
}

func (r casCounterResult) String() string {
	return fmt.Sprintf("%d increments, %d conflicts retried, %d writes of unknown outcome, %d failed or torn reads retried, in %v",
		r.successes, r.conflicts, r.ambiguous, r.failedReads, r.took.Round(time.Millisecond))
}

// runCASCounter has workers each make increments successful increments of
// the counter at bucket/key: GET, then PUT n+1 with If-Match, retrying on
// 412/409. A read that fails with a 5xx, a broken connection or a body that
// is no number is retried: s3rver overwrites files in place, and a GET
// racing an overwrite gets a short body, a 500, or garbage on the
// connection. For the same reason the If-Match ETag is the MD5 of the body
// read, not the GET's ETag header: a torn body can come with the new ETag,
// and a CAS sent with that pair would "succeed" on a value nobody wrote.
// A PUT answered with a 5xx may or may not have happened; it is counted as
// ambiguous and the worker goes on.
func runCASCounter(t *testing.T, clients []*s3.Client, bucket, key string, workers, increments int) casCounterResult {
	t.Helper()
	ctx := t.Context()
	var successes, conflicts, ambiguous, failedReads atomic.Int64
	var wg sync.WaitGroup
	started := time.Now()
	for w := range workers {
		wg.Go(func() {
			c := clients[w%len(clients)]
			for done := 0; done < increments && ctx.Err() == nil; {
				body, ok := readCounter(t, ctx, c, bucket, key)
				n, convErr := strconv.Atoi(string(body))
				if !ok || convErr != nil {
					failedReads.Add(1)
					continue
				}
				sum := md5.Sum(body)
				_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key),
					Body: bytes.NewReader([]byte(strconv.Itoa(n + 1))), IfMatch: aws.String(`"` + hex.EncodeToString(sum[:]) + `"`)})
				switch status := HTTPStatus(err); {
				case err == nil:
					successes.Add(1)
					done++
				case status == 412 || status == 409:
					conflicts.Add(1)
				case status == 0 || status >= 500:
					// More unknown outcomes than increments is a fleet
					// that stopped working (a lease store gone), not a
					// race: fail, rather than retry until the timeout.
					if ambiguous.Add(1) > int64(workers*increments) {
						t.Errorf("worker %d: %d writes of unknown outcome, the last: %v", w, ambiguous.Load(), err)
						return
					}
				default:
					t.Errorf("worker %d write: %v", w, err)
					return
				}
			}
		})
	}
	wg.Wait()
	return casCounterResult{successes: int(successes.Load()), conflicts: int(conflicts.Load()),
		ambiguous: int(ambiguous.Load()), failedReads: int(failedReads.Load()), took: time.Since(started)}
}

// readCounter GETs the counter; false for a read to retry (a 5xx or a
// broken connection). Any other error fails the test.
func readCounter(t *testing.T, ctx context.Context, c *s3.Client, bucket, key string) ([]byte, bool) {
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		if status := HTTPStatus(err); status != 0 && status < 500 && ctx.Err() == nil {
			t.Errorf("read counter: %v", err)
		}
		return nil, false
	}
	defer out.Body.Close()
	body, err := io.ReadAll(out.Body)
	return body, err == nil
}

// TestRaceDeleteVersusPut: a conditional DELETE and a conditional PUT with
// the same expected ETag race through different processes; exactly one wins
// and the key ends in the winner's state.
func TestRaceDeleteVersusPut(t *testing.T) { onEachBackend(t, newFleet, raceDeleteVersusPut) }

func raceDeleteVersusPut(t *testing.T, fleet fleetStarter, backend BackendKind) {
	e, clients := fleet(t, backend)
	ctx := t.Context()
	wins := map[string]int{}
	for round := range 20 {
		key := fmt.Sprintf("contested-%d", round)
		etag := putBytes(t, ctx, clients[0], "race", key, []byte("original")).ETag
		var delErr, putErr error
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, delErr = clients[1].DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("race"), Key: aws.String(key), IfMatch: etag})
		}()
		go func() {
			defer wg.Done()
			_, putErr = clients[2].PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("race"), Key: aws.String(key),
				Body: bytes.NewReader([]byte("replaced")), IfMatch: etag})
		}()
		wg.Wait()
		switch {
		case delErr == nil && putErr == nil:
			t.Fatalf("round %d: both the conditional DELETE and the conditional PUT succeeded", round)
		case delErr == nil:
			if s := HTTPStatus(putErr); s != 412 && s != 404 && s != 409 {
				t.Fatalf("round %d: losing PUT: %v", round, putErr)
			}
			requireMissing(t, ctx, e.BackendClient(), "race", key)
			wins["delete"]++
		case putErr == nil:
			if s := HTTPStatus(delErr); s != 412 && s != 409 {
				t.Fatalf("round %d: losing DELETE: %v", round, delErr)
			}
			if got := getBytes(t, ctx, e.BackendClient(), "race", key); string(got) != "replaced" {
				t.Fatalf("round %d: PUT won but the key holds %q", round, got)
			}
			wins["put"]++
		default:
			t.Fatalf("round %d: neither won: delete %v, put %v", round, delErr, putErr)
		}
	}
	t.Logf("wins: %v", wins)
}

// TestKilledHolder: a process is SIGKILLed in the middle of a conditional
// upload while it holds the key's lease (its row is in the table: the test
// waits for it). Nothing of its upload appears, and another process
// creates the key once timeout × max_clock_skew_rate has passed since it
// first saw the dead holder's row, not before.
func TestKilledHolder(t *testing.T) { testKilledHolder(t, newFleet) }

func testKilledHolder(t *testing.T, fleet fleetStarter) {
	const leaseTimeout, skewRate = 2 * time.Second, 2
	e, clients := fleet(t, BackendVersityGW, WithConfig(func(c *Config) {
		c.Lease.Timeout = leaseTimeout.String()
		c.Lease.MaxClockSkewRate = skewRate
		c.Lease.WaitBudget = "15s"
	}))
	ctx := t.Context()
	holder, taker := e.Proxies[0], clients[1]
	const path = "race/held"
	abandonUpload := startHeldUpload(t, e, holder.Endpoint, path, func() bool {
		out, _, err := leasesCommand(t, e.processEnv, "list", "--held", "--json", "--config", e.Proxies[1].ConfigPath)
		return err == nil && strings.Contains(out, `"path": "`+path+`"`)
	})
	holder.Process.Kill()
	abandonUpload()
	time.Sleep(lateWriteGrace)
	requireMissing(t, ctx, e.BackendClient(), "race", "held")
	requireNoUploads(t, ctx, e.BackendClient(), "race")

	started := time.Now()
	if _, err := taker.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("race"), Key: aws.String("held"),
		Body: bytes.NewReader([]byte("taker")), IfNoneMatch: aws.String("*")}); err != nil {
		t.Fatalf("create the key after the holder died: %v", err)
	}
	waited := time.Since(started)
	takeover := leaseTimeout * skewRate
	t.Logf("created the key %v after the holder died (timeout × skew = %v)", waited.Round(time.Millisecond), takeover)
	if waited < takeover {
		t.Errorf("created the key after %v, before the dead holder's lease could expire (timeout × skew = %v)", waited, takeover)
	}
	if waited > takeover+2*time.Second {
		t.Errorf("waited %v, longer than timeout × skew rate (%v)", waited, takeover)
	}
	if got := getBytes(t, ctx, e.BackendClient(), "race", "held"); string(got) != "taker" {
		t.Fatalf("key holds %q, want the taker's body", got)
	}
}

// TestStaleLeaseTakeover puts a live, unreleased lease record in the table,
// as a holder leaves it when it dies mid-write: a process with a short wait
// budget answers 409, and one with a long budget takes the lease over only
// after timeout × max_clock_skew_rate, then writes.
func TestStaleLeaseTakeover(t *testing.T) {
	const leaseTimeout, skewRate = 2 * time.Second, 2
	e, clients := newFleet(t, BackendVersityGW, WithConfig(func(c *Config) {
		c.Lease.Timeout = leaseTimeout.String()
		c.Lease.MaxClockSkewRate = skewRate
		c.Lease.WaitBudget = "15s"
	}))
	ctx := t.Context()
	impatient := e.ClientAt(t, e.StartProxy(t, func(c *Config) { c.Lease.WaitBudget = "300ms" }).Endpoint, e.RW)
	putDeadHoldersLease(t, e, "race/stale", "*", leaseTimeout)

	_, err := impatient.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("race"), Key: aws.String("stale"),
		Body: bytes.NewReader([]byte("impatient")), IfNoneMatch: aws.String("*")})
	RequireS3Error(t, err, 409, "ConditionalRequestConflict")

	started := time.Now()
	if _, err := clients[1].PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("race"), Key: aws.String("stale"),
		Body: bytes.NewReader([]byte("taker")), IfNoneMatch: aws.String("*")}); err != nil {
		t.Fatalf("take the stale lease over: %v", err)
	}
	waited := time.Since(started)
	t.Logf("took the stale lease over after %v (timeout × skew = %v)", waited.Round(time.Millisecond), leaseTimeout*skewRate)
	if waited < leaseTimeout*skewRate-200*time.Millisecond {
		t.Errorf("took over after %v, before timeout × skew rate (%v) had passed", waited, leaseTimeout*skewRate)
	}
	if got := getBytes(t, ctx, e.BackendClient(), "race", "stale"); string(got) != "taker" {
		t.Fatalf("key holds %q, want the taker's body", got)
	}
}

// putDeadHoldersLease writes a lease record (SPEC §3's arrow-rs schema) the
// way a holder does when it acquires one, and then never releases it.
func putDeadHoldersLease(t *testing.T, e *Env, path, etag string, timeout time.Duration) {
	t.Helper()
	ddb := dynamodb.New(dynamodb.Options{
		Region:       Region,
		BaseEndpoint: aws.String(e.Config.Lease.DynamoDB.Endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("testing", "testing", ""),
	})
	_, err := ddb.PutItem(t.Context(), &dynamodb.PutItemInput{
		TableName: aws.String(e.Config.Lease.DynamoDB.Table),
		Item: map[string]ddbtypes.AttributeValue{
			"path":       &ddbtypes.AttributeValueMemberS{Value: path},
			"etag":       &ddbtypes.AttributeValueMemberS{Value: etag},
			"generation": &ddbtypes.AttributeValueMemberN{Value: "0"},
			"timeout":    &ddbtypes.AttributeValueMemberN{Value: strconv.FormatInt(timeout.Milliseconds(), 10)},
			"ttl":        &ddbtypes.AttributeValueMemberN{Value: strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)},
		},
	})
	if err != nil {
		t.Fatalf("write a dead holder's lease: %v", err)
	}
}

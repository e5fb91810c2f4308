package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
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

// fleetStarter starts three s3cond processes sharing one lease store, in
// front of one versitygw, and creates the bucket "race": newFleet on
// dynalite, newEtcdFleet on etcd. The race tests run on each.
type fleetStarter func(t *testing.T, opts ...Option) (*Env, []*s3.Client)

// newFleet starts three s3cond processes sharing one lease table on
// dynalite, in front of one versitygw.
func newFleet(t *testing.T, opts ...Option) (*Env, []*s3.Client) {
	t.Helper()
	if TargetMode() == ModeDirect {
		t.Skip("races between s3cond processes need s3cond; S3COND_E2E_TARGET=direct runs clients against versitygw")
	}
	e := NewEnv(t, append([]Option{WithDynamoDBLeases(testservers.StartDynalite(t)), WithProxies(3)}, opts...)...)
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
func TestRaceCreate(t *testing.T) { testRaceCreate(t, newFleet) }

func testRaceCreate(t *testing.T, fleet fleetStarter) {
	e, clients := fleet(t)
	ctx := t.Context()
	const writers = 32
	statuses := make([]int, writers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, err := clients[i%len(clients)].PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("race"), Key: aws.String("once"),
				Body: bytes.NewReader([]byte(fmt.Sprintf("writer %d", i))), IfNoneMatch: aws.String("*")})
			statuses[i] = 200
			if err != nil {
				statuses[i] = HTTPStatus(err)
				if statuses[i] != 412 && statuses[i] != 409 {
					t.Errorf("writer %d: %v", i, err)
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	winner, counts := -1, map[int]int{}
	for i, s := range statuses {
		counts[s]++
		if s == 200 {
			winner = i
		}
	}
	t.Logf("outcomes: %v", counts)
	if counts[200] != 1 {
		t.Fatalf("%d writers succeeded, want exactly 1: %v", counts[200], counts)
	}
	if got := getBytes(t, ctx, e.BackendClient(), "race", "once"); string(got) != fmt.Sprintf("writer %d", winner) {
		t.Fatalf("key holds %q, winner was writer %d", got, winner)
	}
}

// TestRaceCASCounter: workers increment a counter object with read, then
// If-Match PUT, retrying on 412/409; the final value must equal the number
// of successful PUTs (no lost update).
func TestRaceCASCounter(t *testing.T) { testRaceCASCounter(t, newFleet) }

func testRaceCASCounter(t *testing.T, fleet fleetStarter) {
	e, clients := fleet(t)
	ctx := t.Context()
	workers, increments := 8, 50
	if testing.Short() {
		increments = 10
	}
	putBytes(t, ctx, clients[0], "race", "counter", []byte("0"))
	var successes, conflicts atomic.Int64
	var wg sync.WaitGroup
	started := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := clients[w%len(clients)]
			for done := 0; done < increments; {
				if ctx.Err() != nil {
					return
				}
				out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("race"), Key: aws.String("counter")})
				if err != nil {
					t.Errorf("worker %d read: %v", w, err)
					return
				}
				body, err := io.ReadAll(out.Body)
				out.Body.Close()
				if err != nil {
					t.Errorf("worker %d read body: %v", w, err)
					return
				}
				n, err := strconv.Atoi(string(body))
				if err != nil {
					t.Errorf("worker %d: counter holds %q", w, body)
					return
				}
				_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("race"), Key: aws.String("counter"),
					Body: bytes.NewReader([]byte(strconv.Itoa(n + 1))), IfMatch: out.ETag})
				switch HTTPStatus(err) {
				case 0:
					if err != nil {
						t.Errorf("worker %d write: %v", w, err)
						return
					}
					successes.Add(1)
					done++
				case 412, 409:
					conflicts.Add(1)
				default:
					t.Errorf("worker %d write: %v", w, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	final := getBytes(t, ctx, e.BackendClient(), "race", "counter")
	t.Logf("%d increments, %d conflicts retried, in %v", successes.Load(), conflicts.Load(), time.Since(started).Round(time.Millisecond))
	if string(final) != strconv.FormatInt(successes.Load(), 10) || successes.Load() != int64(workers*increments) {
		t.Fatalf("counter is %s after %d successful increments (want %d)", final, successes.Load(), workers*increments)
	}
}

// TestRaceDeleteVersusPut: a conditional DELETE and a conditional PUT with
// the same expected ETag race through different processes; exactly one wins
// and the key ends in the winner's state.
func TestRaceDeleteVersusPut(t *testing.T) { testRaceDeleteVersusPut(t, newFleet) }

func testRaceDeleteVersusPut(t *testing.T, fleet fleetStarter) {
	e, clients := fleet(t)
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
// upload. Nothing of its upload appears, and another process can still
// create the key (at the latest once timeout × max_clock_skew_rate has
// passed, if the dead process held the lease).
func TestKilledHolder(t *testing.T) { testKilledHolder(t, newFleet) }

func testKilledHolder(t *testing.T, fleet fleetStarter) {
	const leaseTimeout, skewRate = 2 * time.Second, 2
	e, clients := fleet(t, WithConfig(func(c *Config) {
		c.Lease.Timeout = leaseTimeout.String()
		c.Lease.MaxClockSkewRate = skewRate
		c.Lease.WaitBudget = "15s"
	}))
	ctx := t.Context()
	holder, taker := e.Proxies[0], clients[1]

	const size = 1 << 20
	body, feed := io.Pipe()
	uploadDone := make(chan error, 1)
	go func() {
		_, err := DoContext(ctx, holder.Endpoint, e.RW, RawRequest{Method: http.MethodPut, Path: "/race/held",
			Header: http.Header{"If-None-Match": {"*"}}, BodyFrom: body, ContentLength: size, PayloadHash: UnsignedPayload})
		uploadDone <- err
	}()
	if _, err := feed.Write(PatternBytes(9, size-1)); err != nil {
		t.Fatalf("feed the holder all but the last byte: %v", err)
	}
	time.Sleep(500 * time.Millisecond)
	holder.Process.Kill()
	feed.CloseWithError(errors.New("holder killed"))
	<-uploadDone
	time.Sleep(lateWriteGrace)
	requireMissing(t, ctx, e.BackendClient(), "race", "held")
	requireNoUploads(t, ctx, e.BackendClient(), "race")

	started := time.Now()
	if _, err := taker.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("race"), Key: aws.String("held"),
		Body: bytes.NewReader([]byte("taker")), IfNoneMatch: aws.String("*")}); err != nil {
		t.Fatalf("create the key after the holder died: %v", err)
	}
	waited := time.Since(started)
	t.Logf("created the key %v after the holder died (timeout × skew = %v)", waited.Round(time.Millisecond), leaseTimeout*skewRate)
	if waited > leaseTimeout*skewRate+2*time.Second {
		t.Errorf("waited %v, longer than timeout × skew rate (%v)", waited, leaseTimeout*skewRate)
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
	e, clients := newFleet(t, WithConfig(func(c *Config) {
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

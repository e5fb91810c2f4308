package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/rs/zerolog"
)

// startFakeS3 serves an in-memory gofakes3, standing in for a real S3
// endpoint (s3cond or versitygw). gofakes3 enforces If-Match and
// If-None-Match on PutObject as S3 does, but does not check signatures.
func startFakeS3(t *testing.T) string {
	t.Helper()
	server := httptest.NewServer(gofakes3.New(s3mem.New()).Server())
	t.Cleanup(server.Close)
	return server.URL
}

func newFakeTarget(t *testing.T, label string) *Target {
	t.Helper()
	client, err := NewClient(Endpoint{Label: label, URL: startFakeS3(t), AccessKey: "key", SecretKey: "secret"},
		NewTransport(4))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := EnsureBucket(ctx, client, "bench-bucket"); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	if err := EnsureBucket(ctx, client, "bench-bucket"); err != nil {
		t.Fatalf("bucket that exists: %v", err)
	}
	return &Target{Label: label, Client: client, Bucket: "bench-bucket", Prefix: "run-1/" + label + "/"}
}

func countObjects(t *testing.T, target *Target) int {
	t.Helper()
	out, err := target.Client.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{
		Bucket: aws.String(target.Bucket), Prefix: aws.String(target.Prefix),
	})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	return len(out.Contents)
}

func TestSuiteAgainstTwoFakeEndpoints(t *testing.T) {
	primary, baseline := newFakeTarget(t, "s3cond"), newFakeTarget(t, "direct")
	plan, err := ParseWorkloads("put-4k,get-1m:2,list:2,cond-create,cond-cas,hot-cas:4", 3)
	if err != nil {
		t.Fatal(err)
	}
	const ops = 12
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	report, err := RunSuite(ctx, SuiteOptions{
		Plan: plan, Targets: []*Target{primary, baseline},
		Run: RunOptions{Ops: ops, Log: zerolog.Nop()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Results) != 2*len(plan) || len(report.Comparisons) != len(plan) {
		t.Fatalf("%d results and %d comparisons, want %d and %d",
			len(report.Results), len(report.Comparisons), 2*len(plan), len(plan))
	}
	wantBytes := map[string]int64{"put-4k": ops * 4096, "get-1m": ops << 20, "list": 0,
		"cond-create": ops * 4096, "cond-cas": ops * 4096, "hot-cas": ops * 4096}
	for _, res := range report.Results {
		if res.Ops != ops || res.Errors != 0 {
			t.Errorf("%s on %s: %d ops, %d errors %q; want %d ops and none",
				res.Workload, res.Target, res.Ops, res.Errors, res.ErrorSamples, ops)
		}
		if res.Bytes != wantBytes[res.Workload] {
			t.Errorf("%s on %s: %d bytes, want %d", res.Workload, res.Target, res.Bytes, wantBytes[res.Workload])
		}
		if res.Latency.Count != ops || res.Latency.P50 <= 0 || res.Latency.P99 < res.Latency.P50 {
			t.Errorf("%s on %s: latency %+v", res.Workload, res.Target, res.Latency)
		}
		if res.Workload != "hot-cas" && (res.PreconditionFailed != 0 || res.Conflicts != 0) {
			t.Errorf("%s on %s: %d 412s, %d 409s without contention", res.Workload, res.Target,
				res.PreconditionFailed, res.Conflicts)
		}
	}
	for _, c := range report.Comparisons {
		if c.Primary.Target != "s3cond" || c.Baseline.Target != "direct" || c.OpsRatio() <= 0 {
			t.Errorf("comparison %s: %s vs %s, ratio %v", c.Workload, c.Primary.Target, c.Baseline.Target, c.OpsRatio())
		}
	}
	// Each workload deletes what it wrote.
	if n := countObjects(t, primary); n != 0 {
		t.Errorf("%d objects left on the primary", n)
	}
}

func TestGetDetectsAShortObject(t *testing.T) {
	target := newFakeTarget(t, "direct")
	ctx := context.Background()
	w := getWorkload{name: "get-4k", size: 4096, pool: 1}
	if err := w.Prepare(ctx, target, 1); err != nil {
		t.Fatal(err)
	}
	// Replace the object with a shorter one behind the workload's back.
	if err := putObject(ctx, target, w.key(target, 0), 1, 100, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Do(ctx, target, Op{}); err == nil {
		t.Fatal("a 100-byte object read as get-4k: want a length error")
	}
}

// racingTransport stands for a competing client: just before the first
// conditional PUT goes out, it overwrites the key through a plain PUT, so
// that PUT's If-Match is stale.
type racingTransport struct {
	next  http.RoundTripper
	race  func()
	raced atomic.Bool
}

func (r *racingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPut && req.Header.Get("If-Match") != "" && r.raced.CompareAndSwap(false, true) {
		r.race()
	}
	return r.next.RoundTrip(req)
}

func TestHotCASCountsLostRacesAndRetries(t *testing.T) {
	plain := newFakeTarget(t, "direct")
	racing := &racingTransport{next: NewTransport(2)}
	options := plain.Client.Options()
	options.HTTPClient = &http.Client{Transport: racing}
	client := s3.New(options)
	target := &Target{Label: "racing", Client: client, Bucket: plain.Bucket, Prefix: plain.Prefix}
	ctx := context.Background()
	w := hotCASWorkload{size: 64}
	if err := w.Prepare(ctx, target, 1); err != nil {
		t.Fatal(err)
	}
	racing.race = func() {
		if err := putObject(ctx, plain, w.key(target), 99, 64, nil); err != nil {
			t.Errorf("competing write: %v", err)
		}
	}
	outcome, err := w.Do(ctx, target, Op{Stop: make(chan struct{})})
	if err != nil {
		t.Fatalf("hot-cas: %v", err)
	}
	if outcome.PreconditionFailed != 1 || outcome.Bytes != 64 {
		t.Fatalf("outcome %+v, want one counted 412 and then a commit of 64 bytes", outcome)
	}
}

func TestCondCreateFailsOnAnExistingKey(t *testing.T) {
	target := newFakeTarget(t, "direct")
	ctx := context.Background()
	w := condCreateWorkload{size: 10}
	op := Op{Worker: 0, Seq: 0}
	if _, err := w.Do(ctx, target, op); err != nil {
		t.Fatalf("first create: %v", err)
	}
	outcome, err := w.Do(ctx, target, op)
	if err == nil || outcome.PreconditionFailed != 1 {
		t.Fatalf("second create of the same key: %+v, %v; want a counted 412", outcome, err)
	}
}

package linearizability

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3cond/s3cond/e2e"
	"github.com/s3cond/s3cond/internal/testservers"
)

// BenchmarkRoundTripFloor is scripts/bench.sh's latency mode (issue 26):
// versitygw behind a delay proxy (S3COND_BENCH_STORE_RTT, default 20 ms
// round trip), the lease store behind another (S3COND_BENCH_LEASE_RTT,
// default 10 ms; the embedded store has none), s3cond on loopback with its
// default lease settings, one client. Each operation reports its median
// latency and the store requests and lease calls s3cond's own metrics
// counted per operation; run it with -benchtime 25x.
func BenchmarkRoundTripFloor(b *testing.B) {
	onEachFloorStore(b, "", func(b *testing.B, store string, f *floorBench) {
		b.Run("put", f.each(f.put))
		b.Run("create", f.each(f.create))
		b.Run("cas-chain", f.each(f.casChain()))
		b.Run("lose-412", f.each(f.lose))
		b.Run("copy-create", f.each(f.copyCreate))
		b.Run("complete-create", f.each(f.completeCreate))
		if store == "embedded" || store == "etcd" {
			// Not on moto: it copies every table at each
			// TransactWriteItems, so a 100-row batch took 0.09 s on an
			// empty table, 3 s beside 1 000 rows and 8.6 s beside
			// 2 000, past the lease store's call timeout; the run
			// would time moto. Nor on dynalite, which has no
			// TransactWriteItems (each row is its own call: 343 lease
			// calls and 14.6 s per DeleteObjects). DynamoDB's batch
			// calls are counted in proxy's
			// TestDeleteObjectsOf1000EntriesTakesLeasesInBatches.
			b.Run("deleteobjects-1000", f.each(f.deleteObjects))
		}
		b.Run("hot-cas-8", f.hotKey)
	})
}

// onEachFloorStore runs benches, for the embedded lease store and for
// DynamoDB's API (moto, dynalite) and a one-member etcd, each behind a
// delay proxy of S3COND_BENCH_LEASE_RTT, on a cluster of the round-trip
// floor's setting: the store behind a delay proxy of S3COND_BENCH_STORE_RTT,
// the default lease settings, lease.serialize as serialize says ("": the
// default).
func onEachFloorStore(b *testing.B, serialize string, benches func(b *testing.B, store string, f *floorBench)) {
	storeRTT := benchRTT(b, "S3COND_BENCH_STORE_RTT", 20*time.Millisecond)
	leaseRTT := benchRTT(b, "S3COND_BENCH_LEASE_RTT", 10*time.Millisecond)
	for _, store := range []string{"embedded", "dynamodb", "dynalite", "etcd"} {
		b.Run(store, func(b *testing.B) {
			opts := ClusterOptions{DelayBackend: true, DefaultLease: true, Serialize: serialize}
			switch store {
			case "dynamodb":
				opts.DynamoDB, opts.DelayLeaseStore, opts.Moto, opts.Table = true, true, sharedMoto(b), uniqueTable()
			case "dynalite":
				opts.DynamoDB, opts.DelayLeaseStore, opts.DynamoDBEndpoint = true, true, testservers.StartDynalite(b)
			case "etcd":
				opts.Etcd, opts.DelayLeaseStore = testservers.StartEtcdClusterOf(b, 1), true
			}
			c := NewCluster(b, opts)
			c.Delay.SetLatency(storeRTT / 2)
			if c.LeaseDelay != nil {
				c.LeaseDelay.SetLatency(leaseRTT / 2)
			}
			benches(b, store, &floorBench{c: c, client: c.Client(0, time.Minute), metrics: "http://" + c.AdminAddrs[0] + "/metrics"})
		})
	}
}

func benchRTT(b *testing.B, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		b.Fatalf("%s=%q: %v", name, v, err)
	}
	return d
}

type floorBench struct {
	c       *Cluster
	client  *s3.Client
	metrics string
	seq     atomic.Int64
	// prepared counts the store requests of preparations (unconditional
	// PUTs), taken off the operations' own counts.
	prepared atomic.Int64
}

// each runs op b.N times, one at a time; op returns the part of its time
// to count (a DeleteObjects' preparation is not).
func (f *floorBench) each(op func(b *testing.B) time.Duration) func(*testing.B) {
	return func(b *testing.B) {
		before := f.counts(b)
		samples := make([]time.Duration, 0, b.N)
		for range b.N {
			samples = append(samples, op(b))
		}
		after := f.counts(b)
		slices.Sort(samples)
		b.ReportMetric(float64(samples[len(samples)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(after.store-before.store-f.setupRequests(b))/float64(b.N), "store-req/op")
		b.ReportMetric(float64(after.lease-before.lease)/float64(b.N), "lease-calls/op")
	}
}

// setupRequests is how many store requests the preparation of the
// operations just run sent (counted apart, so store-req/op is the
// operation's own).
func (f *floorBench) setupRequests(*testing.B) int64 { return f.prepared.Swap(0) }

func (f *floorBench) key(prefix string) string {
	return fmt.Sprintf("floor/%s/%d", prefix, f.seq.Add(1))
}

func (f *floorBench) timedPut(b *testing.B, in *s3.PutObjectInput) (time.Duration, *s3.PutObjectOutput, error) {
	in.Bucket = aws.String(f.c.Bucket)
	// Every write's body differs, so its ETag does: a CAS chain of one
	// body over and over would meet the row of its last write again.
	in.Body = strings.NewReader(string(Body(fmt.Sprintf("%s#%d", *in.Key, f.seq.Add(1)), 4<<10)))
	start := time.Now()
	out, err := f.client.PutObject(context.Background(), in)
	return time.Since(start), out, err
}

func (f *floorBench) put(b *testing.B) time.Duration {
	took, _, err := f.timedPut(b, &s3.PutObjectInput{Key: aws.String(f.key("put"))})
	if err != nil {
		b.Fatal(err)
	}
	return took
}

func (f *floorBench) create(b *testing.B) time.Duration {
	took, _, err := f.timedPut(b, &s3.PutObjectInput{Key: aws.String(f.key("create")), IfNoneMatch: aws.String("*")})
	if err != nil {
		b.Fatal(err)
	}
	return took
}

// casChain replaces one key again and again with the ETag its last write
// answered: no read between, as a client that keeps its own state does.
func (f *floorBench) casChain() func(b *testing.B) time.Duration {
	key := f.key("cas")
	var etag *string
	return func(b *testing.B) time.Duration {
		in := &s3.PutObjectInput{Key: aws.String(key)}
		if etag != nil {
			in.IfMatch = etag
		}
		took, out, err := f.timedPut(b, in)
		if err != nil {
			b.Fatal(err)
		}
		etag = out.ETag
		return took
	}
}

func (f *floorBench) lose(b *testing.B) time.Duration {
	// A fresh key and wrong ETag each time: a losing CAS meets no row of
	// an earlier one.
	key := f.key("lose")
	f.prepare(b, key)
	took, _, err := f.timedPut(b, &s3.PutObjectInput{Key: aws.String(key), IfMatch: aws.String(fmt.Sprintf(`"%032x"`, f.seq.Add(1)))})
	if e2e.HTTPStatus(err) != http.StatusPreconditionFailed {
		b.Fatalf("a CAS on a wrong ETag answered %v, want 412", err)
	}
	return took
}

// deleteObjects deletes 1 000 objects in one request, each entry with its
// ETag; every entry must be deleted (a 409 is a miss, and reported).
func (f *floorBench) deleteObjects(b *testing.B) time.Duration {
	const n = 1000
	ids := make([]types.ObjectIdentifier, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	prefix := f.key("delete")
	for i := range ids {
		key := fmt.Sprintf("%s/%04d", prefix, i)
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			ids[i] = types.ObjectIdentifier{Key: aws.String(key), ETag: aws.String(f.prepare(b, key))}
		}()
	}
	wg.Wait()
	start := time.Now()
	out, err := f.client.DeleteObjects(context.Background(), &s3.DeleteObjectsInput{Bucket: aws.String(f.c.Bucket),
		Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)}})
	took := time.Since(start)
	if err != nil {
		b.Fatal(err)
	}
	if len(out.Errors) > 0 {
		b.Logf("DeleteObjects of %d conditional entries: %d answered with errors, e.g. %s", n, len(out.Errors), aws.ToString(out.Errors[0].Code))
		b.ReportMetric(float64(len(out.Errors)), "entry-errors")
	}
	return took
}

// prepare writes key unconditionally, counting its store request apart.
func (f *floorBench) prepare(b *testing.B, key string) string {
	out, err := f.client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(f.c.Bucket), Key: aws.String(key),
		Body: strings.NewReader("prepared")})
	if err != nil {
		b.Fatal(err)
	}
	f.prepared.Add(1)
	return aws.ToString(out.ETag)
}

// hotKey runs 8 CAS writers on one key (HEAD, then PUT If-Match, again on
// each 412 or 409) for b.N commits and reports commits per second.
func (f *floorBench) hotKey(b *testing.B) {
	key := f.key("hot")
	f.prepare(b, key)
	before := f.counts(b)
	var commits, lost atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := f.c.Client(w, time.Minute)
			for commits.Load() < int64(b.N) {
				head, err := client.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(f.c.Bucket), Key: aws.String(key)})
				if err != nil {
					b.Error(err)
					return
				}
				_, err = client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(f.c.Bucket), Key: aws.String(key),
					IfMatch: head.ETag, Body: strings.NewReader(fmt.Sprintf("hot %d", f.seq.Add(1)))})
				switch status := e2e.HTTPStatus(err); {
				case err == nil:
					commits.Add(1)
				case status == http.StatusPreconditionFailed, status == http.StatusConflict:
					lost.Add(1)
				default:
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	after := f.counts(b)
	n := commits.Load()
	b.ReportMetric(float64(n)/took.Seconds(), "commits/s")
	b.ReportMetric(float64(lost.Load())/float64(n), "lost/commit")
	b.ReportMetric(float64(after.store-before.store-f.setupRequests(b))/float64(n), "store-req/commit")
	b.ReportMetric(float64(after.lease-before.lease)/float64(n), "lease-calls/commit")
}

type metricCounts struct{ store, lease int64 }

// counts reads s3cond's /metrics: requests it sent the store, and calls it
// made to the lease store.
func (f *floorBench) counts(b *testing.B) metricCounts {
	v := scrapeCounts(b, f.metrics, "s3cond_backend_request_duration_seconds_count", "s3cond_lease_store_call_duration_seconds_count")
	return metricCounts{store: v[0], lease: v[1]}
}

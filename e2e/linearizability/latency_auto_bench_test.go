package linearizability

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/e2e"
	"github.com/s3cond/s3cond/internal/testservers"
)

// autoProbeBucket is the bucket the start-up probe of BenchmarkAutoFloor's
// versitygw cell writes its scratch keys in.
const autoProbeBucket = "floor-probe"

// BenchmarkAutoFloor measures issue 35's latency targets under
// backend.conditional: auto, with the store behind a delay proxy
// (S3COND_BENCH_STORE_RTT, 20 ms) and s3cond's default lease settings on
// its embedded lease store: a conditional create and a CAS against a PUT,
// a conditional CopyObject against an unconditional one, each with the
// store requests and lease calls it cost:
//
//	S3COND_BENCH_STORE_RTT=20ms go test -run '^$' -bench BenchmarkAutoFloor -benchtime 25x ./e2e/linearizability/
//
// The cells: versitygw v1.8.0, on which auto leases (its DeleteObject
// races its PutObject inside the store: docs/spec.md, "Lease-free
// plans"); atomic, a store whose every write condition is atomic with its
// write (testservers.NewAtomicStore, standing for S3), on which auto runs
// the lease-free plan (that plan's floor); versitygw-deletes-refused,
// versitygw under auto with copy_emulation and refuse_conditional_deletes,
// on which auto runs the lease-free plan (conditional deletes 501).
func BenchmarkAutoFloor(b *testing.B) {
	storeRTT := benchRTT(b, "S3COND_BENCH_STORE_RTT", 20*time.Millisecond)
	cells := []struct {
		name string
		opts ClusterOptions
	}{
		{"versitygw", ClusterOptions{DelayBackend: true, DefaultLease: true, EditConfig: createProbeBucket(b),
			Env: []string{"S3COND_BACKEND_CONDITIONAL=auto", "S3COND_BACKEND_PROBE_BUCKET=" + autoProbeBucket}}},
		{"atomic", ClusterOptions{DelayBackend: true, DefaultLease: true, Fault: testservers.NewAtomicStore}},
		{"versitygw-deletes-refused", ClusterOptions{DelayBackend: true, DefaultLease: true, EditConfig: createProbeBucket(b), Env: []string{
			"S3COND_BACKEND_CONDITIONAL=auto", "S3COND_BACKEND_PROBE_BUCKET=" + autoProbeBucket,
			"S3COND_BACKEND_COPY_EMULATION=true", "S3COND_BACKEND_REFUSE_CONDITIONAL_DELETES=true",
		}}},
	}
	for _, cell := range cells {
		b.Run(cell.name, func(b *testing.B) {
			c := NewCluster(b, cell.opts)
			c.Delay.SetLatency(storeRTT / 2)
			f := &floorBench{c: c, client: c.Client(0, time.Minute), metrics: "http://" + c.AdminAddrs[0] + "/metrics"}
			b.Run("put", f.each(f.put))
			b.Run("create", f.each(f.create))
			b.Run("cas-chain", f.each(f.casChain()))
			b.Run("copy", f.each(f.copyPlain))
			b.Run("copy-create", f.each(f.copyCreate))
		})
	}
}

// createProbeBucket creates the probe bucket on the store before s3cond
// starts (its start-up probe writes there; the config is not changed).
func createProbeBucket(b testing.TB) func(*e2e.Config) {
	return func(cfg *e2e.Config) {
		store := e2e.NewS3Client(cfg.Backend.Endpoint, e2e.Credentials{AccessKey: cfg.Backend.Credentials.AccessKeyID,
			Secret: cfg.Backend.Credentials.SecretAccessKey}, nil)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := store.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(autoProbeBucket)}); err != nil {
			b.Fatalf("create the probe bucket %s: %v", autoProbeBucket, err)
		}
	}
}

package linearizability

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// BenchmarkEmulatedCopyFloor measures the emulated conditional copy
// (backend.copy_emulation, issue 35 item 2) on versitygw behind a delay
// proxy, against an unconditional CopyObject on the same s3cond: the target
// is a conditional copy within 1.2 × an unconditional one. s3cond runs
// conditional: native (unverified: versitygw's DeleteObjects entries would
// make a probe refuse it), so neither takes a lease.
//
//	S3COND_BENCH_STORE_RTT=20ms go test -run '^$' -bench BenchmarkEmulatedCopyFloor -benchtime 25x ./e2e/linearizability/
func BenchmarkEmulatedCopyFloor(b *testing.B) {
	storeRTT := benchRTT(b, "S3COND_BENCH_STORE_RTT", 20*time.Millisecond)
	c := NewCluster(b, ClusterOptions{DelayBackend: true, DefaultLease: true, Env: []string{
		"S3COND_BACKEND_CONDITIONAL=native", "S3COND_BACKEND_NATIVE_UNVERIFIED=true", "S3COND_BACKEND_COPY_EMULATION=true",
	}})
	c.Delay.SetLatency(storeRTT / 2)
	f := &floorBench{c: c, client: c.Client(0, time.Minute), metrics: "http://" + c.AdminAddrs[0] + "/metrics"}
	b.Run("copy", f.each(f.copyPlain))
	b.Run("copy-create", f.each(f.copyCreate))
}

// copyPlain is an unconditional CopyObject of a small object onto a fresh
// key: one store request, forwarded.
func (f *floorBench) copyPlain(b *testing.B) time.Duration {
	src := f.key("copy-src")
	f.prepare(b, src)
	start := time.Now()
	_, err := f.client.CopyObject(context.Background(), &s3.CopyObjectInput{Bucket: aws.String(f.c.Bucket), Key: aws.String(f.key("copy")),
		CopySource: aws.String(f.c.Bucket + "/" + src)})
	took := time.Since(start)
	if err != nil {
		b.Fatal(err)
	}
	return took
}

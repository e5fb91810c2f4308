package e2e

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

const bigObjectSize = 200 << 20

// TestBigObjectStreams uploads and downloads 200 MiB through the target and
// checks the bytes by hash, with s3cond's peak memory well below the object
// size: it must stream, not buffer.
func TestBigObjectStreams(t *testing.T) {
	e := NewEnv(t)
	ctx := t.Context()
	c := e.Client(t, e.RW)
	CreateBucket(t, c, "big")

	wantHash, _, err := SHA256(NewPatternReader(200, bigObjectSize))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("big"), Key: aws.String("200MiB.bin"),
		Body: NewPatternReader(200, bigObjectSize), ContentLength: aws.Int64(bigObjectSize)}); err != nil {
		t.Fatalf("put 200 MiB: %v", err)
	}
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("big"), Key: aws.String("200MiB.bin")})
	if err != nil {
		t.Fatalf("get 200 MiB: %v", err)
	}
	gotHash, n, err := SHA256(out.Body)
	out.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if n != bigObjectSize || gotHash != wantHash {
		t.Fatalf("read back %d bytes with SHA-256 %s, want %d bytes with %s", n, gotHash, int64(bigObjectSize), wantHash)
	}

	if e.Mode == ModeDirect {
		rss, err := PeakRSSKiB(e.Backend.Process.Pid())
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("versitygw peak RSS after 200 MiB up and down: %d MiB", rss>>10)
		return
	}
	rss, err := PeakRSSKiB(e.Proxies[0].Process.Pid())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("s3cond peak RSS (VmHWM) after 200 MiB up and down: %d MiB", rss>>10)
	if limit := int64(bigObjectSize/2) >> 10; rss > limit {
		t.Errorf("s3cond peak RSS %d MiB is over half the object size: it buffers bodies", rss>>10)
	}
}

package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/s3cond/s3cond/internal/testkit"
)

// outliveCopySize makes a CopyObject that takes versitygw (posix) about a
// second on the test machine; outlivePartSize × outliveParts (512 MiB)
// gives the assembly of a CompleteMultipartUpload 0.15 to 0.7 s. The
// client hangs up a third of the direct duration in (at most 100 ms). The
// tests log the direct durations and fail if they drop under 60 ms, so a
// machine too fast for the window shows.
const (
	outliveCopySize = 240 << 20
	outlivePartSize = 64 << 20
	outliveParts    = 8
)

// TestClientHangUpMidCopyKeepsTheKey: a client sends a conditional
// CopyObject (If-None-Match: *) of a large object and hangs up while
// versitygw copies. versitygw finishes the copy anyway, so the key's lease
// must be held until it has: a concurrent If-None-Match: * PUT from another
// client must be refused (412, or 409 if the copy outlasts its wait), never
// answered 200 and then overwritten by the abandoned copy.
func TestClientHangUpMidCopyKeepsTheKey(t *testing.T) {
	e := NewEnv(t)
	e.RequireProxy(t)
	ctx := t.Context()
	c := e.Client(t, e.RW)
	CreateBucket(t, c, "outlive-copy")
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("outlive-copy"), Key: aws.String("src"),
		Body: NewPatternReader(7, outliveCopySize), ContentLength: aws.Int64(outliveCopySize)}); err != nil {
		t.Fatalf("put source: %v", err)
	}
	direct := logDirectDuration(t, "CopyObject of the source", func() error {
		_, err := e.BackendClient().CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("outlive-copy"),
			Key: aws.String("baseline"), CopySource: aws.String("outlive-copy/src")})
		return err
	})

	hungUp := hangUpDuring(t, direct, func(ctx context.Context) error {
		_, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("outlive-copy"), Key: aws.String("dst"),
			CopySource: aws.String("outlive-copy/src"), IfNoneMatch: aws.String("*")})
		return err
	})
	<-hungUp
	requireCreateRefused(t, e, "outlive-copy", "dst", outliveCopySize)
}

// TestClientHangUpMidCompleteKeepsTheKey is the same for a conditional
// CompleteMultipartUpload of large parts, which versitygw assembles after
// its client left.
func TestClientHangUpMidCompleteKeepsTheKey(t *testing.T) {
	e := NewEnv(t)
	e.RequireProxy(t)
	ctx := t.Context()
	c := e.Client(t, e.RW)
	CreateBucket(t, c, "outlive-complete")
	upload := func(client *s3.Client, key string) *s3.CompleteMultipartUploadInput {
		up, err := client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("outlive-complete"), Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		var parts []s3types.CompletedPart
		for n := int32(1); n <= outliveParts; n++ {
			out, err := client.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("outlive-complete"), Key: aws.String(key),
				UploadId: up.UploadId, PartNumber: aws.Int32(n), Body: NewPatternReader(uint64(n), outlivePartSize),
				ContentLength: aws.Int64(outlivePartSize)})
			if err != nil {
				t.Fatalf("upload part %d: %v", n, err)
			}
			parts = append(parts, s3types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(n)})
		}
		return &s3.CompleteMultipartUploadInput{Bucket: aws.String("outlive-complete"), Key: aws.String(key), UploadId: up.UploadId,
			MultipartUpload: &s3types.CompletedMultipartUpload{Parts: parts}}
	}
	baseline := upload(e.BackendClient(), "baseline")
	direct := logDirectDuration(t, "CompleteMultipartUpload", func() error {
		_, err := e.BackendClient().CompleteMultipartUpload(ctx, baseline)
		return err
	})

	complete := upload(c, "dst")
	complete.IfNoneMatch = aws.String("*")
	hungUp := hangUpDuring(t, direct, func(ctx context.Context) error {
		_, err := c.CompleteMultipartUpload(ctx, complete)
		return err
	})
	<-hungUp
	requireCreateRefused(t, e, "outlive-complete", "dst", outlivePartSize*outliveParts)
}

// logDirectDuration times run, the write straight on versitygw, and returns
// how long it took: the window a client has to hang up in mid-write.
func logDirectDuration(t *testing.T, what string, run func() error) time.Duration {
	t.Helper()
	start := time.Now()
	if err := run(); err != nil {
		t.Fatalf("direct %s: %v", what, err)
	}
	took := time.Since(start)
	t.Logf("versitygw takes %s for the %s directly", took, what)
	if took < 60*time.Millisecond {
		t.Errorf("the direct %s took only %s: too short a window for the client to hang up in; make the objects larger", what, took)
	}
	return took
}

// hangUpDuring runs write and hangs up (cancels its connection) a third of
// the direct duration in (at most 100 ms), while the backend works; the
// returned channel is closed once the client has seen its request end.
func hangUpDuring(t *testing.T, direct time.Duration, write func(ctx context.Context) error) <-chan struct{} {
	t.Helper()
	ctx, hangUp := context.WithCancel(t.Context())
	done := make(chan struct{})
	result := make(chan error, 1)
	go func() { result <- write(ctx) }()
	go func() {
		defer close(done)
		select {
		case err := <-result:
			t.Errorf("the write ended (%v) before its client hung up: the backend was too fast", err)
			hangUp()
		case <-time.After(min(100*time.Millisecond, direct/3)):
			hangUp()
			if err := <-result; !errors.Is(err, context.Canceled) {
				t.Errorf("hung-up write ended with %v, want the client's cancellation", err)
			}
		}
	}()
	return done
}

// requireCreateRefused sends an If-None-Match: * PUT of key from another
// client, right after the first one hung up, and checks it is refused; then
// waits for the abandoned write to land and checks the key holds it.
func requireCreateRefused(t *testing.T, e *Env, bucket, key string, wantSize int64) {
	t.Helper()
	ctx := t.Context()
	other := e.Client(t, e.RW)
	_, err := other.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key),
		Body: strings.NewReader("second writer"), IfNoneMatch: aws.String("*")})
	var api smithy.APIError
	switch {
	case err == nil:
		t.Error("the second If-None-Match: * PUT succeeded while the abandoned write was still running")
	case !errors.As(err, &api) || (api.ErrorCode() != "PreconditionFailed" && api.ErrorCode() != "ConditionalRequestConflict"):
		t.Errorf("second create: %v, want PreconditionFailed or ConditionalRequestConflict", err)
	}
	// The abandoned write lands, and nothing was acknowledged that it then overwrote.
	// The store finishes it on its own time: ask it.
	testkit.Within(t, 60*time.Second, "the key to hold the abandoned write", func(ctx context.Context) error {
		head, err := e.BackendClient().HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			return err
		}
		if got := aws.ToInt64(head.ContentLength); got != wantSize {
			return fmt.Errorf("it holds %d bytes, want %d", got, wantSize)
		}
		return nil
	})
}

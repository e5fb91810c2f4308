package embedded

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/rs/zerolog"
)

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func startStore(t *testing.T, ctx context.Context, dir string, log zerolog.Logger) *Server {
	t.Helper()
	s, err := Start(ctx, dir, log)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func client(s *Server) *s3.Client {
	return s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(Endpoint),
		HTTPClient:   s.HTTPClient(),
		UsePathStyle: true,
		// gofakes3 checks no signature; any key works, as for s3cond's re-signed requests.
		Credentials:                credentials.NewStaticCredentialsProvider("embedded-test", "embedded-test-secret", ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
	})
}

func TestObjectsSurviveARestart(t *testing.T) {
	ctx := testContext(t)
	dir := t.TempDir()
	var logs bytes.Buffer
	log := zerolog.New(&logs).Level(zerolog.DebugLevel)

	first := startStore(t, ctx, dir, log)
	body := []byte("kept across restarts")
	// No CreateBucket: buckets appear on first use.
	_, err := client(first).PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String("dev-bucket"), Key: aws.String("dir/object.txt"), Body: bytes.NewReader(body),
	})
	if err != nil {
		t.Fatalf("PutObject: %v", err)
	}
	if err := first.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := first.HTTPClient().Get(Endpoint); err == nil {
		t.Error("the closed store still answers")
	}

	second := startStore(t, ctx, dir, log)
	defer second.Close(ctx)
	out, err := client(second).GetObject(ctx, &s3.GetObjectInput{
		Bucket: aws.String("dev-bucket"), Key: aws.String("dir/object.txt"),
	})
	if err != nil {
		t.Fatalf("GetObject after restart: %v", err)
	}
	got, err := io.ReadAll(out.Body)
	out.Body.Close()
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("GetObject after restart = %q, %v; want %q", got, err, body)
	}
	if !strings.Contains(logs.String(), `"component":"embedded-s3"`) || !strings.Contains(logs.String(), `"level":"debug"`) {
		t.Errorf("gofakes3's logging did not reach zerolog at debug:\n%s", logs.String())
	}
}

func TestMissingObjectIsNoSuchKey(t *testing.T) {
	ctx := testContext(t)
	s := startStore(t, ctx, t.TempDir(), zerolog.Nop())
	defer s.Close(ctx)
	_, err := client(s).HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("dev-bucket"), Key: aws.String("absent")})
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "NotFound" {
		t.Fatalf("HeadObject of a missing key: %v", err)
	}
}

func TestSecondStoreOnTheSameDirectoryFails(t *testing.T) {
	ctx := testContext(t)
	dir := t.TempDir()
	s := startStore(t, ctx, dir, zerolog.Nop())
	defer s.Close(ctx)
	_, err := Start(ctx, dir, zerolog.Nop())
	if err == nil || !strings.Contains(err.Error(), "in use by another process") {
		t.Fatalf("second Start on %s: %v", dir, err)
	}
}

func TestStartCreatesTheDataDirectory(t *testing.T) {
	ctx := testContext(t)
	dir := t.TempDir() + "/nested/data"
	s := startStore(t, ctx, dir, zerolog.Nop())
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// s3cond's default for the embedded store is checksums: forward, which relies
// on gofakes3 keeping an x-amz-checksum-* header and returning it on GET.
func TestForwardedChecksumIsReturned(t *testing.T) {
	ctx := testContext(t)
	s := startStore(t, ctx, t.TempDir(), zerolog.Nop())
	defer s.Close(ctx)
	const crc32OfHello = "NhCmhg==" // base64 CRC32 of "hello"
	put, err := http.NewRequestWithContext(ctx, http.MethodPut, Endpoint+"/dev-bucket/hello", strings.NewReader("hello"))
	if err != nil {
		t.Fatal(err)
	}
	put.Header.Set("x-amz-checksum-crc32", crc32OfHello)
	resp, err := s.HTTPClient().Do(put)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT status %d", resp.StatusCode)
	}
	out, err := client(s).GetObject(ctx, &s3.GetObjectInput{
		Bucket: aws.String("dev-bucket"), Key: aws.String("hello"), ChecksumMode: "ENABLED",
	})
	if err != nil {
		t.Fatalf("GetObject with checksum mode (the SDK validates the checksum): %v", err)
	}
	io.Copy(io.Discard, out.Body)
	out.Body.Close()
	if aws.ToString(out.ChecksumCRC32) != crc32OfHello {
		t.Errorf("ChecksumCRC32 = %q, want %q", aws.ToString(out.ChecksumCRC32), crc32OfHello)
	}
}

// The store answers only connections this process opens through
// DialContext: starting it opens no socket another process could reach.
func TestTheStoreOpensNoSocket(t *testing.T) {
	before := socketCount(t)
	ctx, s, c := startStoreWithClient(t)
	putObject(t, ctx, c, "private", []byte("only through s3cond"))
	s.HTTPClient().CloseIdleConnections()
	if after := socketCount(t); after != before {
		t.Fatalf("the process has %d sockets with the store running, %d before", after, before)
	}
}

// socketCount counts this process's open sockets (Linux).
func socketCount(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("list open files: %v", err)
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && strings.HasPrefix(target, "socket:") {
			n++
		}
	}
	return n
}

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/minio/minio-go/v7"
	miniocreds "github.com/minio/minio-go/v7/pkg/credentials"
)

// roundTrip is one upload the client matrix makes and reads back.
type roundTrip struct {
	name      string
	size      int64
	multipart bool
}

func roundTrips() []roundTrip {
	big := int64(100 << 20)
	if testing.Short() {
		big = 20 << 20
	}
	return []roundTrip{
		{"1B", 1, false},
		{"5MiB", 5 << 20, false},
		{fmt.Sprintf("%dMiB-single", big>>20), big, false},
		{fmt.Sprintf("%dMiB-multipart", big>>20), big, true},
	}
}

// patternFile is a pattern stream written to disk for the clients that read
// files, with its hash.
type patternFile struct {
	path   string
	sha256 string
	size   int64
	seed   uint64
}

func writePatternFile(t *testing.T, dir string, seed uint64, size int64) patternFile {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("pattern-%d-%d.bin", seed, size))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, NewPatternReader(seed, size)); err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	sum, _, err := SHA256(NewPatternReader(seed, size))
	if err != nil {
		t.Fatal(err)
	}
	return patternFile{path: path, sha256: sum, size: size, seed: seed}
}

// uploadAndReadBack uploads file as key with one client and returns the
// SHA-256 and size of what the same client reads back.
type uploadAndReadBack func(t *testing.T, bucket, key string, rt roundTrip, file patternFile) (string, int64)

// TestClientMatrix: every client uploads 1 byte, 5 MiB and 100 MiB (single
// PUT and multipart) in its default payload mode and reads back the same bytes.
func TestClientMatrix(t *testing.T) {
	e := NewEnv(t)
	dir := t.TempDir()
	files := map[int64]patternFile{}
	for i, rt := range roundTrips() {
		if _, ok := files[rt.size]; !ok {
			files[rt.size] = writePatternFile(t, dir, uint64(100+i), rt.size)
		}
	}

	front := NewTLSFront(t, e.Endpoint)
	clients := []struct {
		name string
		run  uploadAndReadBack
	}{
		{"aws-sdk-go-v2", goSDKRoundTrip(e, front)},
		{"minio-go", minioRoundTrip(e)},
		{"aws-cli", awsCLIRoundTrip(e, dir)},
		{"boto3", boto3RoundTrip(e)},
		{"node-sdk", nodeRoundTrip(e)},
	}
	for _, client := range clients {
		t.Run(client.name, func(t *testing.T) {
			bucket := "matrix-" + client.name
			CreateBucket(t, e.Client(t, e.RW), bucket)
			for _, rt := range roundTrips() {
				t.Run(rt.name, func(t *testing.T) {
					file := files[rt.size]
					start := time.Now()
					sum, size := client.run(t, bucket, "obj-"+rt.name, rt, file)
					if size != file.size || sum != file.sha256 {
						t.Fatalf("read back %d bytes with SHA-256 %s, want %d bytes with %s", size, sum, file.size, file.sha256)
					}
					t.Logf("%s %s up and down in %v", client.name, rt.name, time.Since(start).Round(time.Millisecond))
				})
			}
			requireNoUploads(t, t.Context(), e.BackendClient(), bucket)
		})
	}
	modes := front.Modes()
	t.Logf("payload modes aws-sdk-go-v2 used through TLS: %v", modes)
	if modes[StreamingUnsignedTrailer] == 0 {
		t.Errorf("aws-sdk-go-v2 sent no %s upload: %v", StreamingUnsignedTrailer, modes)
	}
}

func goSDKRoundTrip(e *Env, front *TLSFront) uploadAndReadBack {
	return func(t *testing.T, bucket, key string, rt roundTrip, file patternFile) (string, int64) {
		ctx := t.Context()
		c := NewS3Client(front.URL, e.RW, front.Client)
		body := NewPatternReader(file.seed, file.size)
		if !rt.multipart {
			if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: body,
				ContentLength: aws.Int64(file.size)}); err != nil {
				t.Fatalf("put: %v", err)
			}
		} else {
			goSDKMultipart(t, ctx, c, bucket, key, body, 16<<20)
		}
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		defer out.Body.Close()
		sum, n, err := SHA256(out.Body)
		if err != nil {
			t.Fatal(err)
		}
		return sum, n
	}
}

func goSDKMultipart(t *testing.T, ctx context.Context, c *s3.Client, bucket, key string, body *PatternReader, partSize int64) {
	t.Helper()
	created, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("create multipart upload: %v", err)
	}
	var parts []types.CompletedPart
	for off, n := int64(0), int32(1); off < body.Size(); off, n = off+partSize, n+1 {
		size := min(partSize, body.Size()-off)
		out, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: created.UploadId,
			PartNumber: aws.Int32(n), Body: io.NewSectionReader(body, off, size), ContentLength: aws.Int64(size)})
		if err != nil {
			t.Fatalf("upload part %d: %v", n, err)
		}
		parts = append(parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(n)})
	}
	if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key),
		UploadId: created.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}); err != nil {
		t.Fatalf("complete multipart upload: %v", err)
	}
}

// payloadModes records the x-amz-content-sha256 of requests a client sends.
type payloadModes struct {
	next  http.RoundTripper
	mu    sync.Mutex
	modes map[string]int
}

func (p *payloadModes) RoundTrip(r *http.Request) (*http.Response, error) {
	mode := r.Header.Get("X-Amz-Content-Sha256")
	if len(mode) == 64 {
		mode = "<hex sha256>"
	}
	p.mu.Lock()
	p.modes[mode]++
	p.mu.Unlock()
	return p.next.RoundTrip(r)
}

func minioRoundTrip(e *Env) uploadAndReadBack {
	return func(t *testing.T, bucket, key string, rt roundTrip, file patternFile) (string, int64) {
		ctx := t.Context()
		u, err := url.Parse(e.Endpoint)
		if err != nil {
			t.Fatal(err)
		}
		modes := &payloadModes{next: http.DefaultTransport, modes: map[string]int{}}
		c, err := minio.New(u.Host, &minio.Options{Creds: miniocreds.NewStaticV4(e.RW.AccessKey, e.RW.Secret, ""),
			Secure: false, Region: Region, BucketLookup: minio.BucketLookupPath, Transport: modes, MaxRetries: 1})
		if err != nil {
			t.Fatal(err)
		}
		opts := minio.PutObjectOptions{DisableMultipart: true}
		if rt.multipart {
			opts = minio.PutObjectOptions{PartSize: 16 << 20}
		}
		if _, err := c.PutObject(ctx, bucket, key, NewPatternReader(file.seed, file.size), file.size, opts); err != nil {
			t.Fatalf("minio put: %v", err)
		}
		obj, err := c.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
		if err != nil {
			t.Fatalf("minio get: %v", err)
		}
		defer obj.Close()
		sum, n, err := SHA256(obj)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("minio-go payload modes: %v", modes.modes)
		if file.size > 1 && modes.modes[StreamingSignedPayload]+modes.modes[StreamingSignedTrailer] == 0 {
			t.Errorf("minio-go sent no signed aws-chunked upload: %v", modes.modes)
		}
		return sum, n
	}
}

// clientEnv is the environment for CLI subprocesses: the key under test and
// nothing from the user's AWS configuration.
func clientEnv(cred Credentials) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	return append(env, "AWS_ACCESS_KEY_ID="+cred.AccessKey, "AWS_SECRET_ACCESS_KEY="+cred.Secret,
		"AWS_DEFAULT_REGION="+Region, "AWS_CONFIG_FILE="+os.DevNull, "AWS_SHARED_CREDENTIALS_FILE="+os.DevNull,
		"AWS_EC2_METADATA_DISABLED=true", "AWS_MAX_ATTEMPTS=1")
}

// runClient runs a client program and returns its stdout; it fails the test
// when the program fails.
func runClient(t *testing.T, cred Credentials, dir, name string, args ...string) string {
	t.Helper()
	stdout, stderr, err := runClientResult(t, cred, dir, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\nstdout: %s\nstderr: %s", name, strings.Join(args, " "), err, stdout, stderr)
	}
	return stdout
}

func runClientResult(t *testing.T, cred Credentials, dir, name string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, clientProgram(t, name), args...)
	cmd.Env = clientEnv(cred)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

func awsCLIRoundTrip(e *Env, dir string) uploadAndReadBack {
	return func(t *testing.T, bucket, key string, rt roundTrip, file patternFile) (string, int64) {
		if rt.multipart {
			// aws s3 cp switches to multipart above 8 MiB.
			runClient(t, e.RW, dir, "aws", "--endpoint-url", e.Endpoint, "s3", "cp", "--only-show-errors", file.path, "s3://"+bucket+"/"+key)
		} else {
			runClient(t, e.RW, dir, "aws", "--endpoint-url", e.Endpoint, "s3api", "put-object", "--bucket", bucket, "--key", key, "--body", file.path)
		}
		out := filepath.Join(t.TempDir(), "downloaded")
		runClient(t, e.RW, dir, "aws", "--endpoint-url", e.Endpoint, "s3", "cp", "--only-show-errors", "s3://"+bucket+"/"+key, out)
		return hashFile(t, out)
	}
}

func boto3RoundTrip(e *Env) uploadAndReadBack {
	return func(t *testing.T, bucket, key string, rt roundTrip, file patternFile) (string, int64) {
		script, err := filepath.Abs(filepath.Join("scripts", "boto3_roundtrip.py"))
		if err != nil {
			t.Fatal(err)
		}
		return parseRoundTripJSON(t, runClient(t, e.RW, t.TempDir(), "python3", script, e.Endpoint, bucket, key, file.path, modeArg(rt)))
	}
}

func nodeRoundTrip(e *Env) uploadAndReadBack {
	return func(t *testing.T, bucket, key string, rt roundTrip, file patternFile) (string, int64) {
		nodeDir, err := filepath.Abs("node")
		if err != nil {
			t.Fatal(err)
		}
		return parseRoundTripJSON(t, runClient(t, e.RW, nodeDir, "node", "roundtrip.mjs", e.Endpoint, bucket, key, file.path, modeArg(rt)))
	}
}

func modeArg(rt roundTrip) string {
	if rt.multipart {
		return "multipart"
	}
	return "single"
}

func parseRoundTripJSON(t *testing.T, stdout string) (string, int64) {
	t.Helper()
	var out struct {
		SHA256 string `json:"sha256"`
		Size   int64  `json:"size"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(stdout)), &out); err != nil {
		t.Fatalf("client output %q: %v", stdout, err)
	}
	return out.SHA256, out.Size
}

func hashFile(t *testing.T, path string) (string, int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sum, n, err := SHA256(f)
	if err != nil {
		t.Fatal(err)
	}
	return sum, n
}

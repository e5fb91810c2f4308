package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// transcript records what a scenario observed, so the same scenario run
// through s3cond and straight against versitygw can be compared line by line.
type transcript struct{ lines []string }

func (tr *transcript) add(format string, args ...any) {
	tr.lines = append(tr.lines, fmt.Sprintf(format, args...))
}

func requireSameTranscript(t *testing.T, viaTarget, direct *transcript) {
	t.Helper()
	n := max(len(viaTarget.lines), len(direct.lines))
	diffs := 0
	for i := 0; i < n; i++ {
		var a, b string
		if i < len(viaTarget.lines) {
			a = viaTarget.lines[i]
		}
		if i < len(direct.lines) {
			b = direct.lines[i]
		}
		if a != b {
			diffs++
			t.Errorf("step %d differs:\n  target: %s\n  direct: %s", i, a, b)
		}
	}
	if diffs == 0 {
		t.Logf("%d observations identical through the target and direct to versitygw", n)
	}
}

func putBytes(t testing.TB, ctx context.Context, c *s3.Client, bucket, key string, body []byte) *s3.PutObjectOutput {
	t.Helper()
	out, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)})
	if err != nil {
		t.Fatalf("put %s/%s: %v", bucket, key, err)
	}
	return out
}

func getBytes(t testing.TB, ctx context.Context, c *s3.Client, bucket, key string) []byte {
	t.Helper()
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("get %s/%s: %v", bucket, key, err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatalf("read %s/%s: %v", bucket, key, err)
	}
	return b
}

// requireMissing fails unless HEAD on the key answers 404.
func requireMissing(t testing.TB, ctx context.Context, c *s3.Client, bucket, key string) {
	t.Helper()
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err == nil {
		t.Fatalf("HEAD %s/%s: want 404, but it exists (%d bytes, ETag %s)", bucket, key, aws.ToInt64(head.ContentLength), aws.ToString(head.ETag))
	}
	if HTTPStatus(err) != 404 {
		t.Fatalf("HEAD %s/%s: want 404, got %v", bucket, key, err)
	}
}

func requireNoUploads(t testing.TB, ctx context.Context, c *s3.Client, bucket string) {
	t.Helper()
	out, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatalf("list uploads in %s: %v", bucket, err)
	}
	if len(out.Uploads) != 0 {
		t.Fatalf("want no multipart uploads in %s, got %d (first %s)", bucket, len(out.Uploads), aws.ToString(out.Uploads[0].Key))
	}
}

func unquote(etag *string) string { return strings.Trim(aws.ToString(etag), `"`) }

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// lateWriteGrace is how long a backend may take to commit a body whose
// connection was cut: versitygw v1.8.0 stores a truncated UNSIGNED-PAYLOAD
// body a few hundred milliseconds after the abort, so a HEAD right after
// the error is not proof that nothing was stored.
const lateWriteGrace = 1500 * time.Millisecond

// requireOnlyKeys waits lateWriteGrace, then fails unless the bucket holds
// exactly want (sorted) as seen by c.
func requireOnlyKeys(t testing.TB, c *s3.Client, bucket string, want ...string) {
	t.Helper()
	time.Sleep(lateWriteGrace)
	out, err := c.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatalf("list %s: %v", bucket, err)
	}
	var got []string
	for _, o := range out.Contents {
		got = append(got, fmt.Sprintf("%s (%d bytes)", aws.ToString(o.Key), aws.ToInt64(o.Size)))
	}
	keys := objectKeys(out.Contents)
	if !slices.Equal(keys, want) {
		t.Fatalf("after %v, bucket %s holds %v; want only %v", lateWriteGrace, bucket, got, want)
	}
}

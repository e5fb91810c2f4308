package e2e

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// readStatus is the HTTP status a GetObject or HeadObject got, and the
// body a GetObject read.
func readStatus(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return 200
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	t.Fatalf("read got no answer: %v", err)
	return 0
}

// TestReadConditionsHoldOnS3rver: s3rver ignores If-Match and
// If-Unmodified-Since on reads (the control: straight on s3rver a stale
// ETag gets 200 and the body); through s3cond they hold, as on S3.
func TestReadConditionsHoldOnS3rver(t *testing.T) {
	e := NewEnv(t, WithBackend(BackendS3rver))
	e.RequireProxy(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	through, direct := e.Client(t, e.RW), e.BackendClient()
	bucket, key := "read-conditions", "k"
	CreateBucket(t, through, bucket)
	put := func(body string) string {
		out, err := through.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: strings.NewReader(body)})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(out.ETag)
	}
	stale := put("version 1")
	current := put("version 2")
	past := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)

	get := func(c *s3.Client, edit func(*s3.GetObjectInput)) (int, string) {
		in := &s3.GetObjectInput{Bucket: &bucket, Key: &key}
		edit(in)
		out, err := c.GetObject(ctx, in)
		if err != nil {
			return readStatus(t, err), ""
		}
		defer out.Body.Close()
		body, _ := io.ReadAll(out.Body)
		return 200, string(body)
	}
	head := func(c *s3.Client, edit func(*s3.HeadObjectInput)) int {
		in := &s3.HeadObjectInput{Bucket: &bucket, Key: &key}
		edit(in)
		_, err := c.HeadObject(ctx, in)
		return readStatus(t, err)
	}
	staleMatch := func(in *s3.GetObjectInput) { in.IfMatch = aws.String(stale) }
	if status, body := get(direct, staleMatch); status != 200 || body != "version 2" {
		t.Fatalf("control: straight on s3rver a stale If-Match got %d %q; the store no longer ignores it, this test proves nothing", status, body)
	}
	if status, body := get(through, staleMatch); status != 412 || body != "" {
		t.Errorf("GET If-Match stale through s3cond: %d %q, want 412 and no body", status, body)
	}
	if status := head(through, func(in *s3.HeadObjectInput) { in.IfMatch = aws.String(stale) }); status != 412 {
		t.Errorf("HEAD If-Match stale through s3cond: %d, want 412", status)
	}
	unmodifiedSince := func(in *s3.GetObjectInput) { in.IfUnmodifiedSince = aws.Time(past) }
	if status, _ := get(direct, unmodifiedSince); status != 200 {
		t.Fatalf("control: straight on s3rver If-Unmodified-Since in the past got %d", status)
	}
	if status, _ := get(through, unmodifiedSince); status != 412 {
		t.Errorf("GET If-Unmodified-Since in the past through s3cond: %d, want 412", status)
	}
	if status, body := get(through, func(in *s3.GetObjectInput) { in.IfMatch = aws.String(current) }); status != 200 || body != "version 2" {
		t.Errorf("GET If-Match current through s3cond: %d %q, want 200 and the body", status, body)
	}
	if status, _ := get(through, func(in *s3.GetObjectInput) { in.IfNoneMatch = aws.String(current) }); status != 304 {
		t.Errorf("GET If-None-Match current through s3cond: %d, want 304", status)
	}
	// S3's precedence: If-Match holds, so If-Unmodified-Since is not evaluated.
	if status, _ := get(through, func(in *s3.GetObjectInput) {
		in.IfMatch = aws.String(current)
		in.IfUnmodifiedSince = aws.Time(past)
	}); status != 200 {
		t.Errorf("GET If-Match current with If-Unmodified-Since in the past: %d, want 200 as S3", status)
	}
}

// TestCopySourceConditionsHoldOnS3rver: s3rver copies whatever the
// x-amz-copy-source-if-* headers say (the control); through s3cond a copy
// whose source condition fails is 412 and writes nothing.
func TestCopySourceConditionsHoldOnS3rver(t *testing.T) {
	e := NewEnv(t, WithBackend(BackendS3rver))
	e.RequireProxy(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	through, direct := e.Client(t, e.RW), e.BackendClient()
	bucket := "copy-conditions"
	CreateBucket(t, through, bucket)
	src := "source"
	first, err := through.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: &src, Body: strings.NewReader("version 1")})
	if err != nil {
		t.Fatal(err)
	}
	second, err := through.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: &src, Body: strings.NewReader("version 2")})
	if err != nil {
		t.Fatal(err)
	}
	copyTo := func(c *s3.Client, dst string, edit func(*s3.CopyObjectInput)) int {
		in := &s3.CopyObjectInput{Bucket: &bucket, Key: &dst, CopySource: aws.String(bucket + "/" + src)}
		edit(in)
		_, err := c.CopyObject(ctx, in)
		return readStatus(t, err)
	}
	exists := func(key string) bool {
		_, err := direct.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: &key})
		return err == nil
	}
	stale := func(in *s3.CopyObjectInput) { in.CopySourceIfMatch = first.ETag }
	if status := copyTo(direct, "control", stale); status != 200 || !exists("control") {
		t.Fatalf("control: straight on s3rver a stale copy-source-if-match got %d; the store no longer ignores it, this test proves nothing", status)
	}
	if status := copyTo(through, "stale", stale); status != 412 || exists("stale") {
		t.Errorf("copy with a stale x-amz-copy-source-if-match through s3cond: %d (destination written: %v), want 412 and nothing written", status, exists("stale"))
	}
	if status := copyTo(through, "none-match", func(in *s3.CopyObjectInput) { in.CopySourceIfNoneMatch = second.ETag }); status != 412 {
		t.Errorf("copy with x-amz-copy-source-if-none-match of the current ETag: %d, want 412", status)
	}
	if status := copyTo(through, "unmodified", func(in *s3.CopyObjectInput) {
		in.CopySourceIfUnmodifiedSince = aws.Time(time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC))
	}); status != 412 {
		t.Errorf("copy with x-amz-copy-source-if-unmodified-since in the past: %d, want 412", status)
	}
	if status := copyTo(through, "current", func(in *s3.CopyObjectInput) { in.CopySourceIfMatch = second.ETag }); status != 200 || !exists("current") {
		t.Errorf("copy with the current x-amz-copy-source-if-match: %d, want 200 and the copy", status)
	}
}

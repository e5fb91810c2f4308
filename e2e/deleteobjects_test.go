package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestDeleteObjectsStaysInTheGrantedBucket: a key granted only buckets
// "granted-*" sends DeleteObjects to its bucket with entries whose keys
// climb out of it. versitygw (posix) would resolve "../secret/s.txt" to
// another bucket's object and "../../outside.txt" to a file beside its data
// directory; s3cond answers each such entry InvalidArgument and never sends
// it, with or without an ETag, and both files survive. A plain entry in the
// same request is deleted.
func TestDeleteObjectsStaysInTheGrantedBucket(t *testing.T) {
	e := NewEnv(t)
	e.RequireProxy(t)
	ctx := t.Context()
	rw := e.Client(t, e.RW)
	CreateBucket(t, rw, "granted-alpha")
	CreateBucket(t, rw, "secret")
	put := func(bucket, key string) *s3.PutObjectOutput {
		out, err := rw.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: NewPatternReader(1, 10)})
		if err != nil {
			t.Fatalf("put %s/%s: %v", bucket, key, err)
		}
		return out
	}
	secret := put("secret", "s.txt")
	outside := filepath.Join(filepath.Dir(e.Backend.DataDir), "outside.txt")
	if err := os.WriteFile(outside, []byte("outside the store"), 0o600); err != nil {
		t.Fatal(err)
	}
	granted := e.Client(t, e.Granted)
	if _, err := granted.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("secret"), Key: aws.String("s.txt")}); err == nil {
		t.Fatal("the granted key deleted secret/s.txt directly: the grant does not hold")
	}

	for _, etag := range []*string{nil, secret.ETag} {
		put("granted-alpha", "mine")
		out, err := granted.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("granted-alpha"),
			Delete: &s3types.Delete{Objects: []s3types.ObjectIdentifier{
				{Key: aws.String("../secret/s.txt"), ETag: etag},
				{Key: aws.String("../../outside.txt"), ETag: etag},
				{Key: aws.String("mine")},
			}}})
		if err != nil {
			t.Fatalf("DeleteObjects (etag %v): %v", aws.ToString(etag), err)
		}
		codes := map[string]string{}
		for _, e := range out.Errors {
			codes[aws.ToString(e.Key)] = aws.ToString(e.Code)
		}
		for _, k := range []string{"../secret/s.txt", "../../outside.txt"} {
			if codes[k] != "InvalidArgument" {
				t.Errorf("entry %q (etag %v) answered %q, want InvalidArgument", k, aws.ToString(etag), codes[k])
			}
		}
		if len(out.Deleted) != 1 || aws.ToString(out.Deleted[0].Key) != "mine" {
			t.Errorf("deleted %d entries, want only mine", len(out.Deleted))
		}
		if _, err := e.BackendClient().HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("secret"), Key: aws.String("s.txt")}); err != nil {
			t.Fatalf("secret/s.txt is gone after the granted key's DeleteObjects: %v", err)
		}
		if _, err := os.Stat(outside); err != nil {
			t.Fatalf("the file beside versitygw's data directory is gone: %v", err)
		}
	}
}

// TestDeleteObjectsRepeatedKeysAnsweredAtOnce: a key listed several times
// with its ETag is leased once, and every entry is answered at once: no
// entry waits for the request's own lease, none answers 409.
func TestDeleteObjectsRepeatedKeysAnsweredAtOnce(t *testing.T) {
	e := NewEnv(t)
	e.RequireProxy(t)
	ctx := t.Context()
	c := e.Client(t, e.RW)
	CreateBucket(t, c, "repeats")
	var objs []s3types.ObjectIdentifier
	for _, key := range []string{"a", "b"} {
		out, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("repeats"), Key: aws.String(key), Body: NewPatternReader(2, 10)})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			objs = append(objs, s3types.ObjectIdentifier{Key: aws.String(key), ETag: out.ETag})
		}
	}
	start := time.Now()
	out, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("repeats"), Delete: &s3types.Delete{Objects: objs}})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("DeleteObjects of two keys listed three times each took %s", took)
	}
	if len(out.Deleted) != len(objs) || len(out.Errors) != 0 {
		t.Fatalf("%d deleted, errors %+v; want all %d entries deleted", len(out.Deleted), out.Errors, len(objs))
	}
}

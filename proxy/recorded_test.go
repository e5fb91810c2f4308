package proxy

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
)

// headCounter counts the HEADs the backend gets for one key.
type headCounter struct{ n atomic.Int32 }

func (h *headCounter) hook(key string) func(*http.Request) {
	return func(r *http.Request) {
		if r.Method == http.MethodHead && strings.HasSuffix(r.URL.Path, "/"+key) {
			h.n.Add(1)
		}
	}
}

// settled waits for the background releases, which write the records.
func (f *fixture) settled(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.handler.(*Proxy).WaitForReleases(ctx); err != nil {
		t.Fatal(err)
	}
}

// headsOf runs write and returns how many HEADs of the key it sent.
func headsOf(t *testing.T, f *fixture, heads *headCounter, write func() error) (int32, error) {
	t.Helper()
	f.settled(t)
	before := heads.n.Load()
	err := write()
	return heads.n.Load() - before, err
}

func wantStatus(t *testing.T, what string, err error, code string) {
	t.Helper()
	var api smithy.APIError
	if !errors.As(err, &api) || api.ErrorCode() != code {
		t.Fatalf("%s: %v; want %s", what, err, code)
	}
}

// In strict mode a conditional write that takes over a lease row vouching
// for the version it expects sends no HEAD: the previous write recorded
// the key's ETag on release. Where no row vouches (the first write, an
// ETag the key has left, a create after a delete) it reads the store.
func TestStrictConditionalWritesUseRecordedETags(t *testing.T) {
	var heads headCounter
	f := newFixtureWith(t, fixtureOptions{strict: true, backendHook: heads.hook("rec")})
	var etag string
	n, err := headsOf(t, f, &heads, func() error {
		out, err := f.put(t, "rec", "v1", func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") })
		if err == nil {
			etag = aws.ToString(out.ETag)
		}
		return err
	})
	if err != nil || n != 1 {
		t.Fatalf("first create: %d HEADs, %v; want 1 (no row vouches yet), nil", n, err)
	}
	first := etag
	for i, body := range []string{"v2", "v3"} {
		expect := etag
		n, err = headsOf(t, f, &heads, func() error {
			out, err := f.put(t, "rec", body, func(in *s3.PutObjectInput) { in.IfMatch = aws.String(expect) })
			if err == nil {
				etag = aws.ToString(out.ETag)
			}
			return err
		})
		if err != nil || n != 0 {
			t.Fatalf("CAS %d on the recorded ETag: %d HEADs, %v; want none, nil", i+1, n, err)
		}
	}
	n, err = headsOf(t, f, &heads, func() error {
		_, err := f.put(t, "rec", "stale", func(in *s3.PutObjectInput) { in.IfMatch = aws.String(first) })
		return err
	})
	wantStatus(t, "CAS on an ETag the key left", err, "PreconditionFailed")
	if n == 0 {
		t.Fatal("a CAS on an ETag the key left trusted a record naming another version")
	}
	n, err = headsOf(t, f, &heads, func() error {
		_, err := f.client.DeleteObject(context.Background(), &s3.DeleteObjectInput{
			Bucket: aws.String(bucketName), Key: aws.String("rec"), IfMatch: aws.String(etag)})
		return err
	})
	if err != nil || n != 0 {
		t.Fatalf("conditional delete of the recorded ETag: %d HEADs, %v; want none, nil", n, err)
	}
	// Row * still records the first create's ETag: the key went there
	// from absence, and came back since through another row.
	n, err = headsOf(t, f, &heads, func() error {
		_, err := f.put(t, "rec", "again", func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") })
		return err
	})
	if err != nil || n == 0 {
		t.Fatalf("create after the delete: %d HEADs, %v; want a HEAD and success", n, err)
	}
}

// Outside strict mode an unleased write may change the key without
// touching its rows: every conditional write reads the store.
func TestConditionalWritesOutsideStrictModeReadTheStore(t *testing.T) {
	var heads headCounter
	f := newFixtureWith(t, fixtureOptions{backendHook: heads.hook("rec")})
	out, err := f.put(t, "rec", "v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	etag := aws.ToString(out.ETag)
	for i := range 2 {
		n, err := headsOf(t, f, &heads, func() error {
			out, err := f.put(t, "rec", "next", func(in *s3.PutObjectInput) { in.IfMatch = aws.String(etag) })
			if err == nil {
				etag = aws.ToString(out.ETag)
			}
			return err
		})
		if err != nil || n == 0 {
			t.Fatalf("CAS %d: %d HEADs, %v; want a HEAD", i+1, n, err)
		}
	}
}

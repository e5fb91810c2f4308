package e2e

import (
	"bytes"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestAppendsAndRenamesAreNotImplemented: issue 33 finding 1. Eight
// clients "appending" at one offset (PutObject x-amz-write-offset-bytes,
// S3's append) were forwarded to versitygw, which ignores the header: all
// eight got 200 and the object was replaced eight times. Through s3cond
// each gets S3's 501 NotImplemented naming the header, and the object is
// the one written before. A PutObject carrying RenameObject's
// x-amz-rename-source, and RenameObject itself, are 501 the same way.
func TestAppendsAndRenamesAreNotImplemented(t *testing.T) {
	e := NewEnv(t)
	e.RequireProxy(t)
	ctx := t.Context()
	rw := e.Client(t, e.RW)
	CreateBucket(t, rw, "append")
	seed := []byte("the object before any append")
	putBytes(t, ctx, rw, "append", "log", seed)

	const appenders = 8
	answers := make([]error, appenders)
	var wg sync.WaitGroup
	for i := range appenders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, answers[i] = rw.PutObject(ctx, &s3.PutObjectInput{
				Bucket: aws.String("append"), Key: aws.String("log"),
				Body:             bytes.NewReader([]byte("appended by writer " + strconv.Itoa(i))),
				WriteOffsetBytes: aws.Int64(int64(len(seed))),
			})
		}()
	}
	wg.Wait()
	for i, err := range answers {
		if HTTPStatus(err) != http.StatusNotImplemented || ErrorCode(err) != "NotImplemented" {
			t.Errorf("appender %d: %v, want 501 NotImplemented", i, err)
		}
	}
	if got := getBytes(t, ctx, e.BackendClient(), "append", "log"); !bytes.Equal(got, seed) {
		t.Fatalf("after refused appends the store holds %q, want %q", got, seed)
	}

	for _, req := range []RawRequest{
		{Method: http.MethodPut, Path: "/append/renamed", Header: http.Header{"X-Amz-Rename-Source": {"/append/log"}}},
		{Method: http.MethodPut, Path: "/append/renamed", Query: map[string][]string{"renameObject": {""}},
			Header: http.Header{"X-Amz-Rename-Source": {"/append/log"}}},
	} {
		Do(t, e.Endpoint, e.RW, req).RequireError(t, http.StatusNotImplemented, "NotImplemented")
	}
	requireMissing(t, ctx, e.BackendClient(), "append", "renamed")
	if got := getBytes(t, ctx, e.BackendClient(), "append", "log"); !bytes.Equal(got, seed) {
		t.Fatalf("after refused renames the store holds %q, want %q", got, seed)
	}
}

package embedded

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// A client that keeps the ETag CompleteMultipartUpload returned must find
// the same ETag in HEAD, GET and LIST, and so be able to use it in If-Match.
func TestMultipartETagIsTheSameInEveryAnswer(t *testing.T) {
	ctx, _, c := startStoreWithClient(t)
	bucket, key := devBucket, aws.String("dir/multipart")

	created, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: bucket, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	parts := [][]byte{bytes.Repeat([]byte("first part "), 500_000), []byte("second part")}
	var completed []types.CompletedPart
	for i, p := range parts {
		out, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: bucket, Key: key, UploadId: created.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(p)})
		if err != nil {
			t.Fatalf("upload part %d: %v", i+1, err)
		}
		completed = append(completed, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(int32(i + 1))})
	}
	done, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: bucket, Key: key,
		UploadId: created.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: completed}})
	if err != nil {
		t.Fatalf("complete: %v", err)
	}
	whole := md5.Sum(bytes.Join(parts, nil))
	want := `"` + hex.EncodeToString(whole[:]) + `"`
	if got := aws.ToString(done.ETag); got != want {
		t.Errorf("completion ETag = %s, want the stored object's %s", got, want)
	}
	if aws.ToString(done.Key) != *key || aws.ToString(done.Bucket) != *bucket {
		t.Errorf("completion names %s/%s, want %s/%s", aws.ToString(done.Bucket), aws.ToString(done.Key), *bucket, *key)
	}

	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: bucket, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: bucket, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	got.Body.Close()
	list, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: bucket, Prefix: aws.String("dir/")})
	if err != nil || len(list.Contents) != 1 {
		t.Fatalf("list: %v, %d objects", err, len(list.Contents))
	}
	for answer, etag := range map[string]*string{"HEAD": head.ETag, "GET": got.ETag, "LIST": list.Contents[0].ETag} {
		if aws.ToString(etag) != aws.ToString(done.ETag) {
			t.Errorf("%s ETag = %s, completion said %s", answer, aws.ToString(etag), aws.ToString(done.ETag))
		}
	}
}

// A failed completion's error passes through untouched.
func TestFailedCompletionIsUnchanged(t *testing.T) {
	ctx, s, _ := startStoreWithClient(t)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, Endpoint+"/dev-bucket/nothing?uploadId=no-such-upload",
		strings.NewReader(`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"x"</ETag></Part></CompleteMultipartUpload>`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusNotFound || !bytes.Contains(body, []byte("<Code>NoSuchUpload</Code>")) {
		t.Errorf("status %d, body %s; want 404 NoSuchUpload", resp.StatusCode, body)
	}
}

// s3cond holds back the end of a conditional upload until it holds the
// lease; another writer of the key, which may hold that lease, must still be
// able to store its object meanwhile.
func TestAnUnfinishedUploadDoesNotHoldUpAnotherWriteOfTheKey(t *testing.T) {
	ctx, s, c := startStoreWithClient(t)
	url := Endpoint + "/dev-bucket/contended"
	// Set before any connection exists, so every request sees it.
	reading := make(chan struct{})
	s.http.Handler = reportBodyRead(s.http.Handler, "/dev-bucket/contended", reading)

	held, feed := io.Pipe()
	first, err := http.NewRequestWithContext(ctx, http.MethodPut, url, held)
	if err != nil {
		t.Fatal(err)
	}
	first.ContentLength = int64(len("first upload"))
	firstDone := make(chan error, 1)
	go func() {
		resp, err := s.HTTPClient().Do(first)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				err = errors.New(resp.Status)
			}
		}
		firstDone <- err
	}()
	if _, err := feed.Write([]byte("first ")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-reading:
	case <-time.After(10 * time.Second):
		t.Fatal("the store never read the first upload's body")
	}

	quick, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := c.PutObject(quick, &s3.PutObjectInput{Bucket: devBucket,
		Key: aws.String("contended"), Body: strings.NewReader("second")}); err != nil {
		t.Fatalf("a write of the key waited for an upload still in progress: %v", err)
	}
	if got := readObject(t, ctx, s, "contended"); got != "second" {
		t.Fatalf("object = %q, want the finished write's", got)
	}

	if _, err := feed.Write([]byte("upload")); err != nil {
		t.Fatal(err)
	}
	feed.Close()
	if err := <-firstDone; err != nil {
		t.Fatalf("the held upload, once finished: %v", err)
	}
	if got := readObject(t, ctx, s, "contended"); got != "first upload" {
		t.Fatalf("object = %q, want the last write's", got)
	}
}

func readObject(t *testing.T, ctx context.Context, s *Server, key string) string {
	t.Helper()
	out, err := client(s).GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("dev-bucket"), Key: aws.String(key)})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestKeyLocksSerialiseOneKeyOnly(t *testing.T) {
	ctx := testContext(t)
	locks := newKeyLocks()
	unlockA, err := locks.lock(ctx, "bucket/a")
	if err != nil {
		t.Fatal(err)
	}
	// Another key is not held up.
	unlockB, err := locks.lock(ctx, "bucket/b")
	if err != nil {
		t.Fatalf("another key: %v", err)
	}
	unlockB()

	// The same key waits until the holder lets go.
	acquired := make(chan func())
	go func() {
		unlock, err := locks.lock(ctx, "bucket/a")
		if err != nil {
			t.Error(err)
			close(acquired)
			return
		}
		acquired <- unlock
	}()
	select {
	case <-acquired:
		t.Fatal("the same key was locked twice at once")
	case <-time.After(50 * time.Millisecond):
	}
	unlockA()
	select {
	case unlock := <-acquired:
		unlock()
	case <-ctx.Done():
		t.Fatal("the waiter never got the lock")
	}
	if n := len(locks.keys); n != 0 {
		t.Errorf("%d keys still in the map after every holder left", n)
	}
}

func TestKeyLockWaitEndsWithTheContext(t *testing.T) {
	locks := newKeyLocks()
	unlock, err := locks.lock(context.Background(), "bucket/a")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := locks.lock(ctx, "bucket/a"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's deadline", err)
	}
	if users := locks.keys["bucket/a"].users; users != 1 {
		t.Errorf("%d users after the waiter gave up, want the holder alone", users)
	}
}

// reportBodyRead closes reading once the store has read the first bytes of
// a body sent to path.
func reportBodyRead(next http.Handler, path string, reading chan<- struct{}) http.Handler {
	var once sync.Once
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == path && r.Method == http.MethodPut {
			r.Body = &readReporter{ReadCloser: r.Body, read: func() { once.Do(func() { close(reading) }) }}
		}
		next.ServeHTTP(w, r)
	})
}

type readReporter struct {
	io.ReadCloser
	read func()
}

func (r *readReporter) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if n > 0 {
		r.read()
	}
	return n, err
}

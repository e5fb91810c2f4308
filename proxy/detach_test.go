package proxy

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/s3cond/s3cond/internal/testkit"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
)

// slowWriteBackend wraps the backend so that the write matched by isWrite,
// once its whole body is in, is held until finish is closed, then carried
// out even if s3cond has gone away meanwhile: a store whose copy or multipart assembly takes long and
// is not stopped by its requester hanging up (versitygw, measured). It
// counts the HEADs of key, which a waiting conditional writer sends every
// poll to re-check its precondition.
type slowWriteBackend struct {
	key      string
	isWrite  func(*http.Request) bool
	arrived  chan struct{}
	finish   chan struct{}
	heads    testkit.Events[struct{}] // one a HEAD of key
	arriveMu sync.Once
}

func (b *slowWriteBackend) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/"+b.key) && r.Method == http.MethodHead {
			b.heads.Add(struct{}{})
		}
		if b.isWrite(r) {
			// The write has reached the store once its whole body has: a
			// body cut short is not stored.
			body, err := io.ReadAll(r.Body)
			if err != nil {
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			b.arriveMu.Do(func() { close(b.arrived) })
			<-b.finish
		}
		next.ServeHTTP(w, r)
	})
}

// TestClientHangUpMidWriteKeepsTheLeaseUntilTheBackendAnswers: a client
// that hangs up while its conditional CopyObject, CompleteMultipartUpload,
// PutObject or DeleteObject (or strict-mode PutObject) is at the backend
// does not free the key: a second writer waits until the backend has
// finished the first write, then fails its condition against it; the first
// write's outcome stays.
func TestClientHangUpMidWriteKeepsTheLeaseUntilTheBackendAnswers(t *testing.T) {
	for _, tc := range hangUpCases() {
		t.Run(tc.name, func(t *testing.T) { testHangUpMidWrite(t, tc) })
	}
}

// hangUpCase is one kind of conditional write whose client hangs up.
type hangUpCase struct {
	name, op string
	strict   bool // lease.serialize: all-writes
	// isWrite matches the write at the backend.
	isWrite func(*http.Request) bool
	// prepare runs before the write and returns the conditional write.
	prepare func(t *testing.T, f *guardFixture, key string) func(ctx context.Context) error
	// compete is the second writer (default: an If-None-Match: * create),
	// want its answer once the first write finished (default
	// PreconditionFailed), stays what the key then holds ("" for nothing;
	// default "first").
	compete     func(f *guardFixture, key string) error
	want, stays string
}

func hangUpCases() []hangUpCase {
	return append(writeHangUpCases(), deleteHangUpCase())
}

// deleteHangUpCase: a conditional DeleteObject whose client hangs up; a
// compare-and-swap on the version it deletes waits for it, then finds the
// object gone (404), rather than being acknowledged and then deleted.
func deleteHangUpCase() hangUpCase {
	var etag *string
	return hangUpCase{name: "DeleteObject", op: "DeleteObject", want: "NoSuchKey", stays: "",
		isWrite: func(r *http.Request) bool { return r.Method == http.MethodDelete },
		prepare: func(t *testing.T, f *guardFixture, key string) func(ctx context.Context) error {
			out, err := f.put(t, key, "first", nil)
			if err != nil {
				t.Fatal(err)
			}
			etag = out.ETag
			return func(ctx context.Context) error {
				_, err := f.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucketName), Key: aws.String(key), IfMatch: etag})
				return err
			}
		},
		compete: func(f *guardFixture, key string) error {
			_, err := f.client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucketName), Key: aws.String(key),
				Body: strings.NewReader("second"), IfMatch: etag})
			return err
		}}
}

func writeHangUpCases() []hangUpCase {
	isPut := func(r *http.Request) bool {
		return r.Method == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") == ""
	}
	return []hangUpCase{
		{name: "CopyObject", op: "CopyObject",
			isWrite: func(r *http.Request) bool {
				return r.Method == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") != ""
			},
			prepare: func(t *testing.T, f *guardFixture, key string) func(ctx context.Context) error {
				if _, err := f.put(t, key+"-src", "first", nil); err != nil {
					t.Fatal(err)
				}
				return func(ctx context.Context) error {
					_, err := f.client.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(bucketName), Key: aws.String(key),
						CopySource: aws.String(bucketName + "/" + key + "-src"), IfNoneMatch: aws.String("*")})
					return err
				}
			}},
		{name: "CompleteMultipartUpload", op: "CompleteMultipartUpload",
			isWrite: func(r *http.Request) bool { return r.Method == http.MethodPost && r.URL.Query().Has("uploadId") },
			prepare: func(t *testing.T, f *guardFixture, key string) func(ctx context.Context) error {
				return prepareComplete(t, f, key, "first")
			}},
		{name: "PutObject", op: "PutObject", isWrite: isPut,
			prepare: func(t *testing.T, f *guardFixture, key string) func(ctx context.Context) error {
				return func(ctx context.Context) error {
					_, err := f.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucketName), Key: aws.String(key),
						Body: strings.NewReader("first"), IfNoneMatch: aws.String("*")})
					return err
				}
			}},
		{name: "StrictModePutObject", op: "PutObject", strict: true, isWrite: isPut,
			prepare: func(t *testing.T, f *guardFixture, key string) func(ctx context.Context) error {
				return func(ctx context.Context) error {
					_, err := f.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucketName), Key: aws.String(key),
						Body: strings.NewReader("first")})
					return err
				}
			}},
	}
}

func testHangUpMidWrite(t *testing.T, tc hangUpCase) {
	const key = "dst"
	slow := &slowWriteBackend{key: key, arrived: make(chan struct{}), finish: make(chan struct{})}
	var armed atomic.Bool
	slow.isWrite = func(r *http.Request) bool {
		return armed.Load() && strings.HasSuffix(r.URL.Path, "/"+key) && tc.isWrite(r)
	}
	f := newGuardFixture(t, guardOptions{wrap: slow.wrap, strict: tc.strict})
	finish := sync.OnceFunc(func() { close(slow.finish) })
	t.Cleanup(finish) // before the backend closes, which waits for its handlers
	write := tc.prepare(t, f, key)
	armed.Store(true)

	ctx, hangUp := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() { first <- write(ctx) }()
	<-slow.arrived
	hangUp()
	if err := <-first; err == nil {
		t.Fatal("the hung-up write reported success")
	}

	headsBefore := len(slow.heads.All())
	second := make(chan error, 1)
	compete, want, stays := tc.compete, tc.want, tc.stays
	if compete == nil {
		compete = func(f *guardFixture, key string) error {
			_, err := f.put(t, key, "second", func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") })
			return err
		}
		want, stays = "PreconditionFailed", "first"
	}
	go func() { second <- compete(f, key) }()
	// The second writer re-checks its precondition every poll while
	// it waits for the lease: several HEADs show it waiting.
	slow.heads.WaitForCount(t, "the second writer's re-checks of its precondition", headsBefore+4)
	select {
	case err := <-second:
		t.Fatalf("the second writer answered (%v) while the abandoned %s was still running at the backend", err, tc.name)
	default:
	}
	finish()
	if err := <-second; errorCode(err) != want {
		t.Fatalf("second writer after the first write finished: %v, want %s", err, want)
	}
	got, err := f.get(t, key)
	if stays == "" && errorCode(err) != "NoSuchKey" || stays != "" && (err != nil || got != stays) {
		t.Fatalf("object holds %q (%v), want %q", got, err, stays)
	}
	f.observer.waitFor(t, func(e WriteEnd) bool {
		return e.Operation == tc.op && e.ClientLeft && e.Outcome == "completed" && e.Leases == 1
	})
}

// prepareComplete starts a multipart upload of one part holding body and
// returns the conditional CompleteMultipartUpload of it.
func prepareComplete(t *testing.T, f *guardFixture, key, body string) func(ctx context.Context) error {
	t.Helper()
	ctx := context.Background()
	up, err := f.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucketName), Key: aws.String(key)})
	if err != nil {
		t.Fatal(err)
	}
	part, err := f.client.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucketName), Key: aws.String(key),
		UploadId: up.UploadId, PartNumber: aws.Int32(1), Body: strings.NewReader(body)})
	if err != nil {
		t.Fatal(err)
	}
	return func(ctx context.Context) error {
		_, err := f.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucketName), Key: aws.String(key),
			UploadId: up.UploadId, IfNoneMatch: aws.String("*"),
			MultipartUpload: &s3types.CompletedMultipartUpload{Parts: []s3types.CompletedPart{{ETag: part.ETag, PartNumber: aws.Int32(1)}}}})
		return err
	}
}

// brokenAnswerBackend stands for a store whose connection breaks after it
// received a write and before it answered, and which commits that write
// only later: from s3cond's side the write's outcome is unknown.
type brokenAnswerBackend struct {
	key    string
	commit chan struct{}
	once   sync.Once
	broken chan struct{}
}

func (b *brokenAnswerBackend) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPut || !strings.HasSuffix(r.URL.Path, "/"+b.key) {
			next.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
		b.once.Do(func() {
			close(b.broken)
			replay := r.Clone(context.Background())
			replay.Body = io.NopCloser(bytes.NewReader(body))
			go func() {
				<-b.commit
				next.ServeHTTP(httptest.NewRecorder(), replay)
			}()
		})
	})
}

// TestUnknownOutcomeLeavesTheLeaseToExpire: when the backend connection
// breaks after the write was sent, nobody knows whether it committed, so
// the lease is not released: a second create is refused (409) rather than
// told 200 and then overwritten by the late commit.
func TestUnknownOutcomeLeavesTheLeaseToExpire(t *testing.T) {
	broken := &brokenAnswerBackend{key: "lost", commit: make(chan struct{}), broken: make(chan struct{})}
	f := newGuardFixture(t, guardOptions{wrap: broken.wrap})
	commit := sync.OnceFunc(func() { close(broken.commit) })
	t.Cleanup(commit)
	create := func(body string) error {
		_, err := f.put(t, "lost", body, func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") })
		return err
	}
	if err := create("first"); err == nil {
		t.Fatal("a write whose backend connection broke reported success")
	}
	<-broken.broken
	f.observer.waitFor(t, func(e WriteEnd) bool { return e.Operation == "PutObject" && e.Outcome == "unknown" })
	if row := f.table.Row(t, bucketName+"/lost", "*"); row == nil || row.Released {
		t.Fatalf("lease row after an unknown outcome: %+v, want held (left to expire)", row)
	}
	if err := create("second"); errorCode(err) != "ConditionalRequestConflict" {
		t.Fatalf("create while the first write's outcome is unknown: %v, want ConditionalRequestConflict", err)
	}
	commit()
}

// TestClientHangUpMidBodyReleasesTheLease: a client that hangs up before
// its body is complete leaves the backend a short body, which it does not
// store; that write never reached the backend, so its lease is released at
// once and the next create need not wait.
func TestClientHangUpMidBodyReleasesTheLease(t *testing.T) {
	arrived := make(chan struct{})
	var once sync.Once
	f := newGuardFixture(t, guardOptions{wrap: func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/mid") {
				once.Do(func() { close(arrived) })
			}
			next.ServeHTTP(w, r)
		})
	}})
	const size = 1 << 20
	body, feed := io.Pipe()
	ctx, hangUp := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, f.proxyURL+"/"+bucketName+"/mid", body)
	req.ContentLength = size
	req.Header.Set("If-None-Match", "*")
	creds := aws.Credentials{AccessKeyID: testKeyID, SecretAccessKey: testSecret}
	testkit.Sign(t, req, creds, "UNSIGNED-PAYLOAD")
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	go func() { _, _ = feed.Write(make([]byte, size/2)) }()
	<-arrived
	hangUp()
	_ = feed.CloseWithError(context.Canceled)
	<-done

	f.observer.waitFor(t, func(e WriteEnd) bool { return e.Operation == "PutObject" && e.ClientLeft && e.Outcome == "aborted" })
	start := time.Now()
	if _, err := f.put(t, "mid", "second", func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") }); err != nil {
		t.Fatalf("create after a hung-up upload: %v", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("the create waited %s for the lease of an upload that never completed", took)
	}
	if got, _ := f.get(t, "mid"); got != "second" {
		t.Fatalf("object holds %d bytes, want the second create's", len(got))
	}
}

// TestDetachedWriteIsBounded: a write whose client hung up runs on at the
// backend for at most the detached-write limit; one still running then is
// cancelled, and since nobody knows whether it committed, its lease is left
// to expire rather than released.
func TestDetachedWriteIsBounded(t *testing.T) {
	slow := &slowWriteBackend{key: "stuck", arrived: make(chan struct{}), finish: make(chan struct{}),
		isWrite: func(r *http.Request) bool {
			return r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/stuck")
		}}
	f := newGuardFixture(t, guardOptions{wrap: slow.wrap})
	t.Cleanup(sync.OnceFunc(func() { close(slow.finish) }))
	f.proxy.tuneLeases(func(o *leasedwrite.Options) { o.DetachedWriteLimit = 200 * time.Millisecond })

	ctx, hangUp := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := f.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucketName), Key: aws.String("stuck"),
			Body: strings.NewReader("never answered"), IfNoneMatch: aws.String("*")})
		done <- err
	}()
	<-slow.arrived
	hangUp()
	<-done
	f.observer.waitFor(t, func(e WriteEnd) bool {
		return e.Operation == "PutObject" && e.ClientLeft && e.Outcome == "unknown"
	})
	if row := f.table.Row(t, bucketName+"/stuck", "*"); row == nil || row.Released {
		t.Fatalf("lease row of the cancelled write: %+v, want held until it expires", row)
	}
}

package proxy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/leasetest"
	"github.com/s3cond/s3cond/internal/backendhttp"
	"github.com/s3cond/s3cond/internal/testkit"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
	"github.com/s3cond/s3cond/sigv4"
)

const (
	testKeyID  = "AKIDPROXYTEST"
	testSecret = "proxy-test-secret"
	readOnlyID = "AKIDREADONLY"
	// grantedID may read and write only the buckets alpha and granted-*.
	grantedID  = "AKIDGRANTED"
	bucketName = "proxytest"
)

// staticKeys stands for internal/access.Keyring: one read-write key for all
// buckets, one read-only key, one key granted some buckets.
type staticKeys struct{}

func (staticKeys) Secret(id string) (string, bool) {
	switch id {
	case testKeyID, readOnlyID, grantedID:
		return testSecret, true
	}
	return "", false
}

func (staticKeys) Allowed(id, bucket string, write bool) bool {
	switch id {
	case grantedID:
		return bucket == "" || bucket == "alpha" || strings.HasPrefix(bucket, "granted-")
	case readOnlyID:
		return !write
	}
	return id == testKeyID
}

type fixture struct {
	handler  http.Handler
	proxyURL string
	backend  *httptest.Server
	client   *s3.Client
	leases   *dynamolease.Committer
}

// newFixture runs the proxy in front of gofakes3 (an in-memory S3 server
// standing in for the real backend; the e2e tests use versitygw).
func newFixture(t *testing.T, native bool) *fixture {
	t.Helper()
	return newFixtureWith(t, fixtureOptions{native: native})
}

type fixtureOptions struct {
	native         bool                // backend.conditional: native
	strict         bool                // lease.serialize: all-writes
	bucketBackends map[string]*Backend // further backends by client bucket
	// backendHook, if set, sees every request the backend receives.
	backendHook func(*http.Request)
	// forwardPayloadHash is backend.payload_hash: forward.
	forwardPayloadHash bool
	// framedBodies is backend.conditional_body_framing: aws-chunked.
	framedBodies bool
	// leaseTable replaces the in-memory lease table.
	leaseTable *leasetest.Table
	// keyPolicy is backend.key_policy (default strict).
	keyPolicy KeyPolicy
	// bucketMap is backend.buckets: client bucket name → the backend's.
	bucketMap map[string]string
	// observer is told about every finished request (metrics).
	observer RequestObserver
	// bodyIdleTimeout is server.body_idle_timeout (default 20 s).
	bodyIdleTimeout time.Duration
	// writeIdleTimeout is server.response_write_idle_timeout (default 60 s).
	writeIdleTimeout time.Duration
	// storeChecks are the conditions leased writes still send the store.
	storeChecks leasedwrite.StoreChecks
	// writePolicy is the buckets' write policies (writepolicy.go).
	writePolicy WritePolicy
	// storeWrap, if set, wraps gofakes3 (a testservers fake store, or a
	// store's quirks).
	storeWrap func(http.Handler) http.Handler
	// emulateCopy is leasedwrite.Mode.EmulateCopy, tuned by copyEmulation.
	emulateCopy   bool
	copyEmulation CopyEmulation
	// rules are a native mode's per-operation rules (leasefree.go).
	rules leasedwrite.Rules
	// mode, if set, replaces the leased mode's kind and record setting
	// (lease-first, skip_recorded_etags).
	mode *leasedwrite.Mode
	// refuseConditionalDeletes is backend.refuse_conditional_deletes.
	refuseConditionalDeletes bool
}

func newFixtureWith(t *testing.T, o fixtureOptions) *fixture {
	t.Helper()
	backend, server := fakeBackendWrapped(t, "default", o.backendHook, o.storeWrap)
	mode := leasedwrite.Mode{Checks: o.storeChecks, EmulateCopy: o.emulateCopy, Rules: o.rules}
	backend.CopyEmulation = o.copyEmulation
	if o.native {
		mode.Kind = leasedwrite.Native
	}
	if o.mode != nil {
		mode.Kind, mode.SkipRecordedETags = o.mode.Kind, o.mode.SkipRecordedETags
	}
	backend.Mode = func() leasedwrite.Mode { return mode }
	backend.ForwardPayloadHash = o.forwardPayloadHash
	backend.FramedBodies = o.framedBodies
	backend.KeyPolicy = o.keyPolicy
	backend.Buckets = o.bucketMap
	backend.RefuseConditionalDeletes = o.refuseConditionalDeletes
	table := o.leaseTable
	if table == nil {
		table = leasetest.New(leasetest.Hooks{})
	}
	committer := table.Committer("proxy-test", leasetest.Timing{})
	p := New(Options{
		Auth:               sigv4.NewVerifier(staticKeys{}, "us-east-1"),
		Access:             staticKeys{},
		Backend:            backend,
		BucketBackends:     o.bucketBackends,
		Leases:             committer,
		LeaseTimeout:       5 * time.Second,
		Log:                zerolog.Nop(),
		SerializeAllWrites: func(string) bool { return o.strict },
		Observer:           o.observer,
		BodyIdleTimeout:    o.bodyIdleTimeout,
		WriteIdleTimeout:   o.writeIdleTimeout,
		WritePolicy:        o.writePolicy,
	})
	front := httptest.NewServer(p)
	t.Cleanup(front.Close)
	f := &fixture{handler: p, proxyURL: front.URL, backend: server, leases: committer}
	f.client = newClient(front.URL, testKeyID)
	// A fake store's HEAD of the bucket (it reads CreateBucket as a write)
	// made gofakes3's auto-bucket already.
	if _, err := f.client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(bucketName)}); err != nil &&
		(o.storeWrap == nil || errorCode(err) != "BucketAlreadyExists") {
		t.Fatalf("create bucket through the proxy: %v", err)
	}
	return f
}

// fakeBackend is gofakes3 in memory, standing in for a real S3 backend (the
// e2e tests use versitygw), behind the re-signing transport.
func fakeBackend(t *testing.T, name string) (*Backend, *httptest.Server) {
	t.Helper()
	return fakeBackendWith(t, name, nil)
}

// fakeBackendWith is fakeBackend with hook called on each request it gets.
func fakeBackendWith(t *testing.T, name string, hook func(*http.Request)) (*Backend, *httptest.Server) {
	t.Helper()
	return fakeBackendWrapped(t, name, hook, nil)
}

// fakeBackendWrapped is fakeBackendWith with gofakes3 behind wrap (nil:
// none).
func fakeBackendWrapped(t *testing.T, name string, hook func(*http.Request), wrap func(http.Handler) http.Handler) (*Backend, *httptest.Server) {
	t.Helper()
	fake := gofakes3.New(s3mem.New(), gofakes3.WithAutoBucket(true)).Server()
	if wrap != nil {
		fake = wrap(fake)
	}
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hook != nil {
			hook(r)
		}
		fake.ServeHTTP(w, r)
	}))
	t.Cleanup(server.Close)
	u, _ := url.Parse(server.URL)
	return &Backend{
		Name:     name,
		Endpoint: u,
		Client:   resigningClient(backendhttp.NewSpliceTransport(backendhttp.NewBackendTransport())),
	}, server
}

func newClient(endpoint, keyID string) *s3.Client {
	return s3.New(s3.Options{
		BaseEndpoint: aws.String(endpoint),
		Region:       "us-east-1",
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(keyID, testSecret, ""),
	})
}

func errorCode(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	return ""
}

func (f *fixture) put(t *testing.T, key, body string, mod func(*s3.PutObjectInput)) (*s3.PutObjectOutput, error) {
	t.Helper()
	in := &s3.PutObjectInput{Bucket: aws.String(bucketName), Key: aws.String(key), Body: strings.NewReader(body)}
	if mod != nil {
		mod(in)
	}
	return f.client.PutObject(context.Background(), in)
}

func (f *fixture) get(t *testing.T, key string) (string, error) {
	t.Helper()
	out, err := f.client.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(bucketName), Key: aws.String(key)})
	if err != nil {
		return "", err
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	return string(b), err
}

func TestPutGetRoundTripThroughProxy(t *testing.T) {
	f := newFixture(t, false)
	for _, key := range []string{"plain", "dir/with space/ü+%2F=?&", "a"} {
		if _, err := f.put(t, key, "hello "+key, func(in *s3.PutObjectInput) {
			in.Metadata = map[string]string{"colour": "blue"}
		}); err != nil {
			t.Fatalf("put %q: %v", key, err)
		}
		got, err := f.get(t, key)
		if err != nil || got != "hello "+key {
			t.Fatalf("get %q = %q, %v", key, got, err)
		}
	}
	head, err := f.client.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(bucketName), Key: aws.String("plain")})
	if err != nil || head.Metadata["colour"] != "blue" {
		t.Fatalf("metadata did not round trip: %v %v", head, err)
	}
}

func TestReadOnlyKeyCannotWrite(t *testing.T) {
	f := newFixture(t, false)
	ro := newClient(f.proxyURL, readOnlyID)
	_, err := ro.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucketName), Key: aws.String("x"), Body: strings.NewReader("x")})
	if errorCode(err) != "AccessDenied" {
		t.Fatalf("read-only put: %v, want AccessDenied", err)
	}
}

func TestConditionalCreate(t *testing.T) {
	f := newFixture(t, false)
	create := func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") }
	if _, err := f.put(t, "k", "first", create); err != nil {
		t.Fatalf("first create: %v", err)
	}
	_, err := f.put(t, "k", "second", create)
	if errorCode(err) != "PreconditionFailed" {
		t.Fatalf("second create: %v, want PreconditionFailed", err)
	}
	if got, _ := f.get(t, "k"); got != "first" {
		t.Fatalf("stored %q, want the first body", got)
	}
}

func TestConditionalIfMatch(t *testing.T) {
	f := newFixture(t, false)
	_, err := f.put(t, "missing", "x", func(in *s3.PutObjectInput) { in.IfMatch = aws.String(`"0123"`) })
	if errorCode(err) != "NoSuchKey" {
		t.Fatalf("If-Match on a missing key: %v, want NoSuchKey", err)
	}
	out, err := f.put(t, "cas", "v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.put(t, "cas", "v2", func(in *s3.PutObjectInput) { in.IfMatch = aws.String(`"ffff"`) }); errorCode(err) != "PreconditionFailed" {
		t.Fatalf("If-Match with a stale ETag: %v, want PreconditionFailed", err)
	}
	if _, err := f.put(t, "cas", "v2", func(in *s3.PutObjectInput) { in.IfMatch = out.ETag }); err != nil {
		t.Fatalf("If-Match with the current ETag: %v", err)
	}
	if got, _ := f.get(t, "cas"); got != "v2" {
		t.Fatalf("stored %q, want v2", got)
	}
	if _, err := f.put(t, "cas", "v3", func(in *s3.PutObjectInput) {
		in.IfMatch, in.IfNoneMatch = out.ETag, aws.String("*")
	}); errorCode(err) != "NotImplemented" {
		t.Fatalf("both headers: %v, want NotImplemented", err)
	}
}

func TestRacingCreatesHaveOneWinner(t *testing.T) {
	f := newFixture(t, false)
	winner := requireOneWinner(t, f, 16, func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") })
	if got, _ := f.get(t, "race"); got != winner {
		t.Fatalf("stored body is not the winner's")
	}
}

// requireOneWinner races writers PutObjects of key "race", each with its
// own body and opt applied, and requires exactly one to succeed and the
// rest to be told they lost (412 or 409); it returns the winner's body.
func requireOneWinner(t *testing.T, f *fixture, writers int, opt func(*s3.PutObjectInput)) string {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	winners, lost := []string{}, 0
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := strings.Repeat(string(rune('a'+i)), 100)
			_, err := f.put(t, "race", body, opt)
			mu.Lock()
			defer mu.Unlock()
			switch code := errorCode(err); {
			case err == nil:
				winners = append(winners, body)
			case code == "PreconditionFailed" || code == "ConditionalRequestConflict":
				lost++
			default:
				t.Errorf("writer %d: unexpected %v", i, err)
			}
		}()
	}
	wg.Wait()
	if len(winners) != 1 || lost != writers-1 {
		t.Fatalf("%d winners and %d losers, want exactly one winner", len(winners), lost)
	}
	return winners[0]
}

func TestConditionalDelete(t *testing.T) {
	f := newFixture(t, false)
	out, err := f.put(t, "d", "x", nil)
	if err != nil {
		t.Fatal(err)
	}
	del := func(etag string) error {
		_, err := f.client.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String(bucketName), Key: aws.String("d"), IfMatch: aws.String(etag)})
		return err
	}
	if err := del(`"beef"`); errorCode(err) != "PreconditionFailed" {
		t.Fatalf("delete with a wrong ETag: %v", err)
	}
	if err := del(*out.ETag); err != nil {
		t.Fatalf("delete with the right ETag: %v", err)
	}
	if err := del(*out.ETag); errorCode(err) != "NoSuchKey" {
		t.Fatalf("delete of a missing key: %v, want NoSuchKey", err)
	}
}

func TestDeleteObjectsPerKeyETags(t *testing.T) {
	f := newFixture(t, false)
	a, _ := f.put(t, "a", "a", nil)
	if _, err := f.put(t, "b", "b", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.put(t, "c", "c", nil); err != nil {
		t.Fatal(err)
	}
	out, err := f.client.DeleteObjects(context.Background(), &s3.DeleteObjectsInput{
		Bucket: aws.String(bucketName),
		Delete: &s3types.Delete{Objects: []s3types.ObjectIdentifier{
			{Key: aws.String("a"), ETag: a.ETag},
			{Key: aws.String("b"), ETag: aws.String(`"not-it"`)},
			{Key: aws.String("c")},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	deleted := map[string]bool{}
	for _, d := range out.Deleted {
		deleted[*d.Key] = true
	}
	if !deleted["a"] || !deleted["c"] || deleted["b"] {
		t.Fatalf("deleted %v, want a and c", deleted)
	}
	if len(out.Errors) != 1 || *out.Errors[0].Key != "b" || *out.Errors[0].Code != "PreconditionFailed" {
		t.Fatalf("errors %+v, want b PreconditionFailed", out.Errors)
	}
	if got, err := f.get(t, "b"); err != nil || got != "b" {
		t.Fatalf("b should survive: %q %v", got, err)
	}
}

// signedRawPut sends a PUT whose x-amz-content-sha256 is the hash of
// declared, while the body is actual: a tampered upload.
func signedRawPut(t *testing.T, endpoint, key string, declared, actual []byte, header http.Header) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, endpoint+"/"+bucketName+"/"+key, bytes.NewReader(actual))
	for k, v := range header {
		req.Header[k] = v
	}
	sum := sha256.Sum256(declared)
	hash := hex.EncodeToString(sum[:])
	creds := aws.Credentials{AccessKeyID: testKeyID, SecretAccessKey: testSecret}
	testkit.Sign(t, req, creds, hash)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestTamperedBodyIsNotStored(t *testing.T) {
	f := newFixture(t, false)
	for _, cond := range []string{"", "*"} {
		h := http.Header{}
		if cond != "" {
			h.Set("If-None-Match", cond)
		}
		key := "tampered" + cond
		resp := signedRawPut(t, f.proxyURL, key, []byte("the body I signed"), []byte("the body I sent!!"), h)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusBadRequest || !bytes.Contains(body, []byte("XAmzContentSHA256Mismatch")) {
			t.Fatalf("tampered put (cond %q): %d %s", cond, resp.StatusCode, body)
		}
		if resp.Header.Get("X-Amz-Request-Id") == "" {
			t.Fatal("no x-amz-request-id")
		}
		if _, err := f.get(t, key); errorCode(err) != "NoSuchKey" {
			t.Fatalf("tampered object is visible (cond %q): %v", cond, err)
		}
	}
	// The lease of the conditional attempt was released: a create now succeeds at once.
	start := time.Now()
	if _, err := f.put(t, "tampered*", "good", func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") }); err != nil {
		t.Fatalf("create after a failed conditional upload: %v", err)
	}
	if time.Since(start) > time.Second {
		t.Fatalf("create waited %s: the failed upload's lease was left held", time.Since(start))
	}
}

func TestNativeModeForwardsConditions(t *testing.T) {
	f := newFixture(t, true)
	if _, err := f.put(t, "n", "1", nil); err != nil {
		t.Fatal(err)
	}
	// gofakes3 enforces If-None-Match on PutObject itself.
	_, err := f.put(t, "n", "2", func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") })
	if errorCode(err) != "PreconditionFailed" {
		t.Fatalf("native create over an existing object: %v, want the backend's PreconditionFailed", err)
	}
}

func TestPutOver5GiBIsEntityTooLarge(t *testing.T) {
	f := newFixture(t, false)
	req := httptest.NewRequest(http.MethodPut, "http://"+strings.TrimPrefix(f.proxyURL, "http://")+"/"+bucketName+"/huge", strings.NewReader("x"))
	req.ContentLength = 5<<30 + 1
	creds := aws.Credentials{AccessKeyID: testKeyID, SecretAccessKey: testSecret}
	testkit.Sign(t, req, creds, "UNSIGNED-PAYLOAD")
	rec := httptest.NewRecorder()
	f.handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "<Code>EntityTooLarge</Code>") {
		t.Fatalf("got %d %s", rec.Code, rec.Body.String())
	}
	if _, err := f.get(t, "huge"); errorCode(err) != "NoSuchKey" {
		t.Fatalf("stored: %v", err)
	}
}

// resigningClient is the backend client internal/app builds, around next:
// s3cond's re-signer with the test backend key.
func resigningClient(next http.RoundTripper) *http.Client {
	return &http.Client{Transport: sigv4.NewResigner(next,
		credentials.NewStaticCredentialsProvider("backend", "backend-secret", ""), "us-east-1")}
}

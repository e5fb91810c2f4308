package e2e

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/internal/testservers"
)

// A RenameObject whose s3cond is SIGKILLed between its copy and its
// delete (the store holds the delete until then) leaves both copies and
// its intent in the lease table. The next conditional writer of either
// key, through a new s3cond on the same lease store, finishes the rename
// before its own write is judged: the source is gone and the write is
// answered as on the renamed keys. On versitygw and on s3rver.
func TestRenameCrashBetweenCopyAndDelete(t *testing.T) {
	bin := testservers.BuildS3cond(t)
	for _, kind := range []BackendKind{BackendVersityGW, BackendS3rver} {
		t.Run(string(kind)+"/source writer", func(t *testing.T) {
			// If-Match on the source's old ETag: the finished rename
			// removed the source, so S3's answer is 404 NoSuchKey.
			got := crashRename(t, kind, bin, sourceWriter)
			requireCrashFinished(t, got, http.StatusNotFound, "moved")
		})
		t.Run(string(kind)+"/destination writer", func(t *testing.T) {
			// If-Match on the copy's ETag at the destination (a writer
			// that read the copy): it writes, once the source is gone.
			got := crashRename(t, kind, bin, destinationWriter)
			requireCrashFinished(t, got, http.StatusOK, "overwrite")
		})
	}
}

// The negative control: an s3cond built to ignore rename intents lets the
// next writer of the source write into the half-done rename: its If-Match
// on the old ETag succeeds and both keys keep an object.
func TestRenameCrashNegativeControl(t *testing.T) {
	bin := testservers.BuildS3condTagged(t, "s3cond_unsafe_ignore_rename_intents")
	got := crashRename(t, BackendS3rver, bin, sourceWriter)
	if got.status != http.StatusOK || !got.sourceExists {
		t.Fatalf("without intents: next write %d, source exists %v; the control should have written into the rename (200, source kept)", got.status, got.sourceExists)
	}
}

type crashOutcome struct {
	status       int  // the next writer's answer
	sourceExists bool // after it
	destination  string
}

func requireCrashFinished(t *testing.T, got crashOutcome, status int, destination string) {
	t.Helper()
	if got.status != status || got.sourceExists || got.destination != destination {
		t.Fatalf("next write %d (want %d), source exists %v, destination %q: the rename was not finished first",
			got.status, status, got.sourceExists, got.destination)
	}
}

func sourceWriter(ctx context.Context, c *s3.Client, bucket, srcETag string) error {
	_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("crash-src"),
		Body: bytes.NewReader([]byte("overwrite")), IfMatch: aws.String(srcETag)}, noRetries)
	return err
}

func destinationWriter(ctx context.Context, c *s3.Client, bucket, copiedETag string) error {
	_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("crash-dst"),
		Body: bytes.NewReader([]byte("overwrite")), IfMatch: aws.String(copiedETag)}, noRetries)
	return err
}

func noRetries(o *s3.Options) { o.RetryMaxAttempts = 1 }

// crashRename runs the scenario with s3cond binary bin and returns what
// the next writer saw.
func crashRename(t *testing.T, kind BackendKind, bin string, next func(context.Context, *s3.Client, string, string) error) crashOutcome {
	ctx := t.Context()
	store, _ := StartStore(t, kind)
	bucket := "crash-" + string(kind)
	hold := newDeleteHold(t, store.Endpoint, "/"+bucket+"/crash-src")
	e := &Env{Mode: ModeS3cond, Store: Store{Kind: kind, Endpoint: hold.url, Cred: store.Cred}}
	e.RW = Credentials{"AKIAE2EREADWRITE", "e2e-read-write-secret-0123456789"}
	cfg := e.baseConfig()
	cfg.Keys = cfg.Keys[:1]
	// A short lease: the crashed holder's rows are taken over 3 s after
	// they are first seen.
	cfg.Lease.Timeout = "1s"
	cfg.Server.Listen = testservers.FreeAddr(t)
	cfg.DataDir = filepath.Join(t.TempDir(), "data") // the lease file both runs share
	text, err := cfg.YAML()
	if err != nil {
		t.Fatal(err)
	}
	proxy := testservers.StartS3condBinary(t, bin, text)
	c := NewS3Client(proxy.Endpoint, e.RW, nil)
	direct := NewS3Client(store.Endpoint, store.Cred, nil)
	CreateBucket(t, c, bucket)
	put := putBytes(t, ctx, c, bucket, "crash-src", []byte("moved"))

	renamed := make(chan error, 1)
	go func() {
		_, err := c.RenameObject(ctx, renameInput(bucket, "crash-src", "crash-dst"), noRetries)
		renamed <- err
	}()
	select {
	case <-hold.held:
	case err := <-renamed:
		t.Fatalf("the rename ended (%v) before its delete reached the store", err)
	case <-time.After(time.Minute):
		t.Fatal("the rename's delete never reached the store")
	}
	proxy.Process.Kill()
	<-renamed
	// The window: both keys hold the object.
	if got := string(getBytes(t, ctx, direct, bucket, "crash-dst")); got != "moved" {
		t.Fatalf("the copy did not land before the crash: destination %q", got)
	}
	getBytes(t, ctx, direct, bucket, "crash-src")

	proxy.Restart(t)
	err = next(ctx, c, bucket, aws.ToString(put.ETag))
	out := crashOutcome{status: http.StatusOK}
	if err != nil {
		var re interface{ HTTPStatusCode() int }
		if !errors.As(err, &re) {
			t.Fatalf("next write: %v", err)
		}
		out.status = re.HTTPStatusCode()
	}
	_, headErr := direct.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("crash-src")})
	out.sourceExists = headErr == nil
	out.destination = string(getBytes(t, ctx, direct, bucket, "crash-dst"))
	return out
}

// deleteHold is a reverse proxy in front of the store that holds the
// first DELETE of one path until the test ends (the s3cond that sent it
// is killed meanwhile) and never forwards it; everything else passes.
type deleteHold struct {
	url  string
	held chan struct{}
}

func newDeleteHold(t *testing.T, target, path string) *deleteHold {
	to, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	h := &deleteHold{held: make(chan struct{})}
	var once sync.Once
	forward := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(to)
		pr.Out.Host = pr.In.Host // as s3cond signed it
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first := false
		if r.Method == http.MethodDelete && r.URL.Path == path {
			once.Do(func() { first = true })
		}
		if !first {
			forward.ServeHTTP(w, r)
			return
		}
		close(h.held)
		select {
		case <-r.Context().Done():
		case <-t.Context().Done():
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	h.url = srv.URL
	return h
}

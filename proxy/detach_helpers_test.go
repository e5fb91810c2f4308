package proxy

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease/leasetest"
	"github.com/s3cond/s3cond/internal/backendhttp"
	"github.com/s3cond/s3cond/internal/testkit"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
	"github.com/s3cond/s3cond/sigv4"
)

// guardFixture is the proxy in front of gofakes3 (standing for the
// backend), where a test wraps the backend's handler to make it slow, break
// its connection, or resolve keys as a file-backed store does.
type guardFixture struct {
	*fixture
	proxy    *Proxy
	table    *leasetest.Table
	observer *writeEndRecorder
}

type guardOptions struct {
	// wrap, if set, wraps gofakes3's handler.
	wrap func(http.Handler) http.Handler
	// table replaces the in-memory lease table.
	table     *leasetest.Table
	keyPolicy KeyPolicy
	strict    bool
	// lease tunes the committer (zero: the proxy tests' usual values).
	lease leasetest.Timing
}

func newGuardFixture(t *testing.T, o guardOptions) *guardFixture {
	t.Helper()
	var handler http.Handler = gofakes3.New(s3mem.New(), gofakes3.WithAutoBucket(true)).Server()
	if o.wrap != nil {
		handler = o.wrap(handler)
	}
	server := httptest.NewServer(handler)
	t.Cleanup(server.Close)
	u, _ := url.Parse(server.URL)
	backend := &Backend{
		Name: "default", Endpoint: u, KeyPolicy: o.keyPolicy,
		Client: resigningClient(backendhttp.NewSpliceTransport(backendhttp.NewBackendTransport())),
	}
	table := o.table
	if table == nil {
		table = leasetest.New(leasetest.Hooks{})
	}
	committer := table.Committer("proxy-test", o.lease)
	observer := &writeEndRecorder{}
	p := New(Options{
		Auth: sigv4.NewVerifier(staticKeys{}, "us-east-1"), Access: staticKeys{}, Backend: backend,
		Leases: committer, LeaseTimeout: committer.Options().Timeout, Log: zerolog.Nop(), Observer: observer,
		SerializeAllWrites: func(string) bool { return o.strict },
	})
	front := httptest.NewServer(p)
	t.Cleanup(front.Close)
	f := &fixture{handler: p, proxyURL: front.URL, backend: server, leases: committer, client: newClient(front.URL, testKeyID)}
	if _, err := f.client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(bucketName)}); err != nil {
		t.Fatalf("create bucket through the proxy: %v", err)
	}
	return &guardFixture{fixture: f, proxy: p, table: table, observer: observer}
}

// writeEndRecorder stands for internal/metrics: it records the leased
// writes the proxy reports.
type writeEndRecorder struct {
	ends testkit.Events[WriteEnd]
}

func (r *writeEndRecorder) ObserveRequest(RequestRecord) {}

func (r *writeEndRecorder) ObserveLeasedWriteEnd(e WriteEnd) { r.ends.Add(e) }

// waitFor waits until a reported write end satisfies match, or fails the test.
func (r *writeEndRecorder) waitFor(t *testing.T, match func(WriteEnd) bool) WriteEnd {
	t.Helper()
	return r.ends.WaitFor(t, "a matching leased write end", match)
}

// tuneLeases rebuilds the proxy's leased-write runner with its options
// changed by edit (a slower assumed store, a shorter detached limit).
func (p *Proxy) tuneLeases(edit func(*leasedwrite.Options)) {
	edit(&p.leaseOptions)
	p.leased = leasedwrite.New(p.leaseOptions)
}

package proxy

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/s3cond/s3cond/internal/testkit"
)

// recordingObserver stands for internal/metrics.Metrics: it keeps every
// request record the proxy reports.
type recordingObserver struct {
	records testkit.Events[RequestRecord]
}

func (o *recordingObserver) ObserveRequest(r RequestRecord) { o.records.Add(r) }

// waitFor waits until a record with the operation and status is reported:
// the proxy reports a request after its answer is written, so possibly
// after the client has read it.
func (o *recordingObserver) waitFor(t *testing.T, op string, status int) {
	t.Helper()
	o.records.WaitFor(t, fmt.Sprintf("a request record %s %d", op, status), func(r RequestRecord) bool {
		return r.Operation == op && r.Status == status
	})
}

// backendRequests counts what reaches the fake backend.
type backendRequests struct {
	mu   sync.Mutex
	seen []string
}

func (b *backendRequests) hook(r *http.Request) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seen = append(b.seen, r.Method+" "+r.URL.RequestURI())
}

func (b *backendRequests) since(mark int) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.seen[mark:]...)
}

func (b *backendRequests) mark() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.seen)
}

// TestAllowListRefusesBeforeTheBackend sends signed requests, from a key
// granted every bucket read-write, that are no S3 operation s3cond knows:
// versitygw's admin API among them. Each gets S3's answer from s3cond,
// reaches no backend and is counted as Refused. (Before the allow-list
// they were forwarded, re-signed with the store's credentials.)
func TestAllowListRefusesBeforeTheBackend(t *testing.T) {
	backend := &backendRequests{}
	observer := &recordingObserver{}
	f := newFixtureWith(t, fixtureOptions{backendHook: backend.hook, observer: observer})
	host := wireHost(f.proxyURL)
	createUser := []byte(`<Account><Access>intruder</Access><Secret>intruder-secret</Secret><Role>admin</Role></Account>`)
	for _, tc := range []struct {
		name, method, target string
		body                 []byte
		status               int
		code                 string
	}{
		{"versitygw create-user", "PATCH", "/create-user", createUser, http.StatusMethodNotAllowed, "MethodNotAllowed"},
		{"versitygw list-users", "PATCH", "/list-users", nil, http.StatusMethodNotAllowed, "MethodNotAllowed"},
		{"versitygw admin create bucket", "PATCH", "/" + bucketName + "/create", nil, http.StatusMethodNotAllowed, "MethodNotAllowed"},
		{"unknown bucket subresource", "GET", "/" + bucketName + "?session", nil, http.StatusNotImplemented, "NotImplemented"},
		{"unknown object subresource", "PUT", "/" + bucketName + "/k?session", nil, http.StatusNotImplemented, "NotImplemented"},
		{"unknown query parameter", "PUT", "/" + bucketName + "?replication-reset", nil, http.StatusNotImplemented, "NotImplemented"},
		{"a POST to the service (RGW's STS and IAM)", "POST", "/?Action=CreateUser", nil, http.StatusNotImplemented, "NotImplemented"},
		{"MinIO's admin API", "GET", "/minio/admin/v3/info", nil, http.StatusBadRequest, "InvalidBucketName"},
		// A method net/http parses but chi's router did not know was once
		// answered by chi in plain text, before s3cond classified it.
		{"a WebDAV method", "PROPFIND", "/" + bucketName + "/k", nil, http.StatusMethodNotAllowed, "MethodNotAllowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mark := backend.mark()
			r := &wireRequest{method: tc.method, target: tc.target, body: tc.body}
			r.add("Content-Length", strconv.Itoa(len(tc.body)))
			r.sign(t, host, payloadHashOf(tc.body))
			sendWire(t, f.proxyURL, r.bytes(host), false).wantS3Error(t, tc.status, tc.code)
			observer.waitFor(t, "Refused", tc.status)
			if seen := backend.since(mark); len(seen) > 0 {
				t.Fatalf("the backend received %v", seen)
			}
		})
	}
}

// TestAllowListForwardsOrdinaryCalls checks the allow-list's other side
// through a real SDK: calls clients make pass, and are named in metrics.
func TestAllowListForwardsOrdinaryCalls(t *testing.T) {
	observer := &recordingObserver{}
	f := newFixtureWith(t, fixtureOptions{observer: observer})
	if _, err := f.put(t, "k", "v", nil); err != nil {
		t.Fatal(err)
	}
	if got, err := f.get(t, "k"); err != nil || got != "v" {
		t.Fatalf("get = %q, %v", got, err)
	}
	observer.waitFor(t, "CreateBucket", http.StatusOK)
	observer.waitFor(t, "PutObject", http.StatusOK)
	observer.waitFor(t, "GetObject", http.StatusOK)
}

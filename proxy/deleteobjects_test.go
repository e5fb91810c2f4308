package proxy

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3cond/s3cond/dynamolease/leasetest"
	"github.com/s3cond/s3cond/internal/s3xml"
	"github.com/s3cond/s3cond/internal/testkit"
)

// deleteRecorder wraps the backend and records the DeleteObjects documents
// it receives; onDelete, if set, runs when one arrives, before the backend
// acts on it.
type deleteRecorder struct {
	mu       sync.Mutex
	requests []*s3xml.DeleteRequest
	onDelete func()
}

func (d *deleteRecorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Query().Has("delete") {
			body, _ := io.ReadAll(r.Body)
			req, err := s3xml.ParseDeleteRequest(bytes.NewReader(body), 0)
			if err == nil {
				d.mu.Lock()
				d.requests = append(d.requests, req)
				d.mu.Unlock()
			}
			if d.onDelete != nil {
				d.onDelete()
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		next.ServeHTTP(w, r)
	})
}

// keysSent lists every key the backend was asked to delete.
func (d *deleteRecorder) keysSent() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var keys []string
	for _, r := range d.requests {
		for _, o := range r.Objects {
			keys = append(keys, o.Key)
		}
	}
	sort.Strings(keys)
	return keys
}

func (f *fixture) deleteObjects(t *testing.T, objs ...s3types.ObjectIdentifier) *s3.DeleteObjectsOutput {
	t.Helper()
	out, err := f.client.DeleteObjects(context.Background(), &s3.DeleteObjectsInput{
		Bucket: aws.String(bucketName), Delete: &s3types.Delete{Objects: objs}})
	if err != nil {
		t.Fatalf("DeleteObjects: %v", err)
	}
	return out
}

func entry(key string, etag *string) s3types.ObjectIdentifier {
	return s3types.ObjectIdentifier{Key: aws.String(key), ETag: etag}
}

// TestDeleteObjectsRefusesKeysThePolicyRefuses: an entry whose key would
// resolve to another object on a file-backed store ("..", ".", "//") gets
// its own InvalidArgument error and never reaches the backend, with or
// without an ETag; the other entries are deleted.
func TestDeleteObjectsRefusesKeysThePolicyRefuses(t *testing.T) {
	rec := &deleteRecorder{}
	f := newGuardFixture(t, guardOptions{wrap: rec.wrap})
	put, err := f.put(t, "ok", "v", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.put(t, "plain", "v", nil); err != nil {
		t.Fatal(err)
	}
	hostile := []string{"../secret/s.txt", "../../etc/passwd", "a/./b", "a//b"}
	for _, withETag := range []bool{false, true} {
		objs := []s3types.ObjectIdentifier{entry("plain", nil)}
		if withETag {
			objs = []s3types.ObjectIdentifier{entry("ok", put.ETag)}
		}
		for _, k := range hostile {
			var etag *string
			if withETag {
				etag = put.ETag
			}
			objs = append(objs, entry(k, etag))
		}
		out := f.deleteObjects(t, objs...)
		refused := map[string]string{}
		for _, e := range out.Errors {
			refused[aws.ToString(e.Key)] = aws.ToString(e.Code)
		}
		for _, k := range hostile {
			if refused[k] != "InvalidArgument" {
				t.Errorf("withETag=%v: entry %q answered %q, want InvalidArgument", withETag, k, refused[k])
			}
		}
		if len(out.Deleted) != 1 {
			t.Errorf("withETag=%v: deleted %+v, want the one acceptable entry", withETag, out.Deleted)
		}
	}
	if got := rec.keysSent(); strings.Join(got, ",") != "ok,plain" {
		t.Fatalf("the backend was asked to delete %q, want only ok and plain", got)
	}
}

// creatingTable reports the path of every lease row created to creates; it
// stands for the lease store.
func creatingTable(creates *testkit.Events[string]) *leasetest.Table {
	return leasetest.NewPlain(leasetest.Hooks{Before: func(_ context.Context, c leasetest.Call) error {
		if c.Op == leasetest.OpCreate {
			creates.Add(c.Path)
		}
		return nil
	}})
}

// TestDeleteObjectsFoldsRepeatedKeys: a key listed several times with its
// ETag is leased once; every entry gets its answer at once (S3 answers each
// entry), none of them 409.
func TestDeleteObjectsFoldsRepeatedKeys(t *testing.T) {
	var creates testkit.Events[string]
	rec := &deleteRecorder{}
	f := newGuardFixture(t, guardOptions{table: creatingTable(&creates), wrap: rec.wrap})
	a, _ := f.put(t, "a", "a", nil)
	b, _ := f.put(t, "b", "b", nil)
	start := time.Now()
	out := f.deleteObjects(t, entry("a", a.ETag), entry("b", b.ETag), entry("a", a.ETag), entry("b", b.ETag),
		entry("a", a.ETag), entry("b", aws.String(`"other"`)), entry("b", nil))
	if took := time.Since(start); took > time.Second {
		t.Errorf("DeleteObjects took %s: repeats waited for their own lease", took)
	}
	if len(out.Deleted) != 6 {
		t.Errorf("deleted entries %d, want 6 (every entry that holds answered)", len(out.Deleted))
	}
	if len(out.Errors) != 1 || aws.ToString(out.Errors[0].Key) != "b" || aws.ToString(out.Errors[0].Code) != "PreconditionFailed" {
		t.Errorf("errors %+v, want b's wrong ETag alone as PreconditionFailed", out.Errors)
	}
	created := map[string]int{}
	for _, path := range creates.All() {
		created[path]++
	}
	for _, path := range []string{bucketName + "/a", bucketName + "/b"} {
		if n := created[path]; n != 1 {
			t.Errorf("%s leased %d times, want once", path, n)
		}
	}
	if got := rec.keysSent(); strings.Join(got, ",") != "a,b" {
		t.Errorf("the backend was asked to delete %q, want a and b once each", got)
	}
}

// TestDeleteObjectsWaitsOneBudgetForAHeldKey: a key another writer holds
// answers 409 once the request's single wait budget is spent, however often
// it is listed; the other keys are deleted, and the request never waits
// (holding their leases) longer than that budget.
func TestDeleteObjectsWaitsOneBudgetForAHeldKey(t *testing.T) {
	f := newGuardFixture(t, guardOptions{lease: leasetest.Timing{Timeout: 5 * time.Second,
		PollInterval: 20 * time.Millisecond, WaitBudget: 500 * time.Millisecond}})
	a, _ := f.put(t, "a", "a", nil)
	held, _ := f.put(t, "held", "h", nil)
	c, _ := f.put(t, "c", "c", nil)
	lease, err := f.leases.Acquire(context.Background(), bucketName+"/held", aws.ToString(held.ETag), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lease.Release(context.Background()) }()

	start := time.Now()
	out := f.deleteObjects(t, entry("a", a.ETag), entry("held", held.ETag), entry("held", held.ETag),
		entry("held", held.ETag), entry("c", c.ETag))
	if took := time.Since(start); took > 1500*time.Millisecond {
		t.Errorf("DeleteObjects took %s, want about one 500ms wait budget", took)
	}
	if len(out.Deleted) != 2 {
		t.Errorf("deleted %d entries, want a and c", len(out.Deleted))
	}
	if len(out.Errors) != 3 {
		t.Fatalf("errors %+v, want the three entries of the held key", out.Errors)
	}
	for _, e := range out.Errors {
		if aws.ToString(e.Key) != "held" || aws.ToString(e.Code) != "ConditionalRequestConflict" {
			t.Errorf("error %s %s, want held ConditionalRequestConflict", aws.ToString(e.Key), aws.ToString(e.Code))
		}
	}
}

// slowCreateTable stands for a lease store that is slow to create one
// key's row (a throttled DynamoDB partition): acquiring that lease takes
// longer than the whole lease timeout. It records when each row was last
// written.
type slowCreateTable struct {
	*leasetest.Table

	mu      sync.Mutex
	written map[string]time.Time
}

func newSlowCreateTable(slowPath string, delay time.Duration) *slowCreateTable {
	s := &slowCreateTable{written: map[string]time.Time{}}
	s.Table = leasetest.NewPlain(leasetest.Hooks{
		Before: func(_ context.Context, c leasetest.Call) error {
			if c.Op == leasetest.OpCreate && c.Path == slowPath {
				time.Sleep(delay)
			}
			return nil
		},
		After: func(c leasetest.Call, err error) {
			if err == nil && (c.Op == leasetest.OpCreate || c.Op == leasetest.OpReplace) {
				s.mu.Lock()
				s.written[c.Path] = time.Now()
				s.mu.Unlock()
			}
		},
	})
	return s
}

func (s *slowCreateTable) lastWrite(path string) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.written[path]
}

// TestDeleteObjectsNeverDeletesUnderAnExpiredLease: when acquiring one
// key's lease takes longer than the lease timeout, the leases taken before
// it are renewed meanwhile, and the backend delete is sent only while at
// least half of every lease remains (SPEC §3 step 5): at that moment, each
// row was written less than half a timeout ago and is not released.
func TestDeleteObjectsNeverDeletesUnderAnExpiredLease(t *testing.T) {
	const timeout = 400 * time.Millisecond
	table := newSlowCreateTable(bucketName+"/b", 3*timeout)
	rec := &deleteRecorder{}
	etags := map[string]string{}
	var problems []string
	rec.onDelete = func() {
		for _, key := range []string{"a", "b"} {
			path := bucketName + "/" + key
			row := table.Row(t, path, etags[key])
			switch {
			case row == nil:
				problems = append(problems, key+": no lease row")
			case row.Released:
				problems = append(problems, key+": lease released")
			case time.Since(table.lastWrite(path)) >= timeout:
				// Expired by the holder's own clock. (s3cond sends only with
				// half a lease left; the margin is not asserted here, since on
				// a loaded machine the request's way to the store eats it.)
				problems = append(problems, key+": lease last written "+time.Since(table.lastWrite(path)).String()+" ago")
			}
		}
	}
	f := newGuardFixture(t, guardOptions{table: table.Table, wrap: rec.wrap, lease: leasetest.Timing{Timeout: timeout,
		PollInterval: 20 * time.Millisecond, WaitBudget: 5 * time.Second}})
	a, _ := f.put(t, "a", "a", nil)
	b, _ := f.put(t, "b", "b", nil)
	etags["a"], etags["b"] = aws.ToString(a.ETag), aws.ToString(b.ETag)
	out := f.deleteObjects(t, entry("a", a.ETag), entry("b", b.ETag))
	if len(out.Deleted) != 2 {
		t.Fatalf("deleted %+v, errors %+v; want a and b deleted", out.Deleted, out.Errors)
	}
	if len(problems) > 0 {
		t.Fatalf("when the backend delete arrived: %s", strings.Join(problems, "; "))
	}
}

// TestDeleteObjectsOnAMissingBucketIsNoSuchBucket: the backend's refusal of
// the whole request reaches the client as S3's error for it.
func TestDeleteObjectsOnAMissingBucketIsNoSuchBucket(t *testing.T) {
	f := newGuardFixture(t, guardOptions{wrap: func(next http.Handler) http.Handler {
		// gofakes3 creates buckets on demand; this stands for a store that has no bucket "gone".
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/gone") {
				w.WriteHeader(http.StatusNotFound)
				_, _ = w.Write([]byte(`<Error><Code>NoSuchBucket</Code></Error>`))
				return
			}
			next.ServeHTTP(w, r)
		})
	}})
	_, err := f.client.DeleteObjects(context.Background(), &s3.DeleteObjectsInput{Bucket: aws.String("gone"),
		Delete: &s3types.Delete{Objects: []s3types.ObjectIdentifier{entry("k", nil)}}})
	if errorCode(err) != "NoSuchBucket" {
		t.Fatalf("DeleteObjects on a missing bucket: %v, want NoSuchBucket", err)
	}
}

package proxy

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/s3cond/s3cond/dynamolease/leasetest"
	"github.com/s3cond/s3cond/proxy/leasedwrite"
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

// watchedTable is the in-memory lease table (standing for DynamoDB) that
// tells a test each time a row was written: the records are written by
// releases that run after the client has its answer.
type watchedTable struct {
	*leasetest.Table
	mu      sync.Mutex
	changed chan struct{} // closed at the next write
}

func newWatchedTable() *watchedTable {
	w := &watchedTable{changed: make(chan struct{})}
	w.Table = leasetest.New(leasetest.Hooks{After: func(c leasetest.Call, _ error) {
		switch c.Op {
		case leasetest.OpCreate, leasetest.OpReplace, leasetest.OpTakeVouched:
			w.wrote()
		}
	}})
	return w
}

func (w *watchedTable) wrote() {
	w.mu.Lock()
	defer w.mu.Unlock()
	close(w.changed)
	w.changed = make(chan struct{})
}

// waitForRow waits until the row (path, etag) is released; vouching
// also wants it to record its own version.
func (w *watchedTable) waitForRow(t *testing.T, path, etag string, vouching bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		w.mu.Lock()
		changed := w.changed
		w.mu.Unlock()
		r := w.Row(t, path, etag)
		if r != nil && r.Released && (!vouching || r.KeyState != nil) {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("row (%s, %s) not released (vouching %v): %+v", path, etag, vouching, r)
		}
	}
}

// headsOf runs write and returns how many HEADs of the key it sent.
func headsOf(t *testing.T, heads *headCounter, write func() error) (int32, error) {
	t.Helper()
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
	table := newWatchedTable()
	f := newFixtureWith(t, fixtureOptions{strict: true, backendHook: heads.hook("rec"), leaseTable: table.Table})
	const path = bucketName + "/rec"
	// settle waits for the release of the row a write held and the birth
	// of the row of the ETag it wrote.
	settle := func(held, wrote string) {
		table.waitForRow(t, path, held, false)
		table.waitForRow(t, path, wrote, true)
	}
	var etag string
	n, err := headsOf(t, &heads, func() error {
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
	settle("*", first)
	for i, body := range []string{"v2", "v3"} {
		expect := etag
		n, err = headsOf(t, &heads, func() error {
			out, err := f.put(t, "rec", body, func(in *s3.PutObjectInput) { in.IfMatch = aws.String(expect) })
			if err == nil {
				etag = aws.ToString(out.ETag)
			}
			return err
		})
		if err != nil || n != 0 {
			t.Fatalf("CAS %d on the recorded ETag: %d HEADs, %v; want none, nil", i+1, n, err)
		}
		settle(expect, etag)
	}
	n, err = headsOf(t, &heads, func() error {
		_, err := f.put(t, "rec", "stale", func(in *s3.PutObjectInput) { in.IfMatch = aws.String(first) })
		return err
	})
	wantStatus(t, "CAS on an ETag the key left", err, "PreconditionFailed")
	if n == 0 {
		t.Fatal("a CAS on an ETag the key left trusted a record naming another version")
	}
	table.waitForRow(t, path, first, false)
	n, err = headsOf(t, &heads, func() error {
		_, err := f.client.DeleteObject(context.Background(), &s3.DeleteObjectInput{
			Bucket: aws.String(bucketName), Key: aws.String("rec"), IfMatch: aws.String(etag)})
		return err
	})
	if err != nil || n != 0 {
		t.Fatalf("conditional delete of the recorded ETag: %d HEADs, %v; want none, nil", n, err)
	}
	table.waitForRow(t, path, etag, false)
	// Row * still records the first create's ETag: the key went there
	// from absence, and came back since through another row.
	n, err = headsOf(t, &heads, func() error {
		_, err := f.put(t, "rec", "again", func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") })
		return err
	})
	if err != nil || n == 0 {
		t.Fatalf("create after the delete: %d HEADs, %v; want a HEAD and success", n, err)
	}
}

// A record trusts the store's acknowledgement. On a store served
// lease-first (s3rver answers a PutObject before its file is written) or
// configured with skip_recorded_etags, strict mode records nothing and
// every conditional write reads the store.
func TestStrictModeRecordsNothingWhereAcknowledgementsAreNotTrusted(t *testing.T) {
	for name, mode := range map[string]leasedwrite.Mode{
		"lease-first":         {Kind: leasedwrite.LeaseFirst},
		"skip_recorded_etags": {Kind: leasedwrite.HoldBack, SkipRecordedETags: true},
	} {
		t.Run(name, func(t *testing.T) {
			var heads headCounter
			table := newWatchedTable()
			f := newFixtureWith(t, fixtureOptions{strict: true, backendHook: heads.hook("rec"), leaseTable: table.Table, mode: &mode})
			out, err := f.put(t, "rec", "v1", func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") })
			if err != nil {
				t.Fatal(err)
			}
			etag := aws.ToString(out.ETag)
			table.waitForRow(t, bucketName+"/rec", "*", false)
			n, err := headsOf(t, &heads, func() error {
				_, err := f.put(t, "rec", "v2", func(in *s3.PutObjectInput) { in.IfMatch = aws.String(etag) })
				return err
			})
			if err != nil || n == 0 {
				t.Fatalf("CAS after a recorded-looking release: %d HEADs, %v; want a HEAD and success", n, err)
			}
			if r := table.Row(t, bucketName+"/rec", "*"); r == nil || r.KeyState != nil {
				t.Fatalf("row * after the create: %+v; want released without a key state", r)
			}
		})
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
		n, err := headsOf(t, &heads, func() error {
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

package leasestore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/internal/config"
	"github.com/s3cond/s3cond/internal/testservers"
)

// scanRecorder passes every request through to a real DynamoDB (dynalite)
// and records, for each Scan, the Limit it asked for and how many items
// DynamoDB read for it (ScannedCount).
type scanRecorder struct {
	mu    sync.Mutex
	scans []scanCall
}

type scanCall struct {
	limit   int // 0: none
	scanned int
}

func (s *scanRecorder) front(t *testing.T, endpoint string) string {
	t.Helper()
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(resp *http.Response) error {
		if !strings.HasSuffix(resp.Request.Header.Get("X-Amz-Target"), ".Scan") {
			return nil
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		var out struct{ ScannedCount int }
		if err := json.Unmarshal(body, &out); err != nil {
			return fmt.Errorf("scan answer: %w", err)
		}
		s.mu.Lock()
		s.scans[len(s.scans)-1].scanned = out.ScannedCount
		s.mu.Unlock()
		return nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".Scan") {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			var in struct{ Limit int }
			if err := json.Unmarshal(body, &in); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			s.mu.Lock()
			s.scans = append(s.scans, scanCall{limit: in.Limit})
			s.mu.Unlock()
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// openFilledStore opens the lease store env configures (its data in a
// temporary directory), creates its table, and fills it with n rows under
// "b/" and one elsewhere.
func openFilledStore(t *testing.T, n int, env ...string) *Store {
	t.Helper()
	cfg, err := config.Load("", append([]string{"S3COND_DATA_DIR=" + t.TempDir()}, env...))
	if err != nil {
		t.Fatal(err)
	}
	store, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	if _, err := store.Create(context.Background(), zerolog.Nop()); err != nil {
		t.Fatal(err)
	}
	fillStore(t, store, n)
	return store
}

// fillStore creates n rows under "b/" and one elsewhere through store's
// serving table.
func fillStore(t *testing.T, store *Store, n int) {
	t.Helper()
	table, err := store.Table(dynamolease.Options{}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	ttl := time.Now().Add(time.Hour)
	for i := range n {
		if _, err := table.Create(context.Background(), dynamolease.Record{Path: fmt.Sprintf("b/k%03d", i), ETag: "*",
			Generation: 1, Timeout: 20 * time.Second, TTL: ttl, Owner: "dead:1#t/1"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := table.Create(context.Background(), dynamolease.Record{Path: "other/k", ETag: "*", Generation: 1,
		Timeout: 20 * time.Second, TTL: ttl}); err != nil {
		t.Fatal(err)
	}
}

// requireRows checks that rows are b/k000 … b/k(n-1), in order.
func requireRows(t *testing.T, rows []dynamolease.Record, n int) {
	t.Helper()
	if len(rows) != n {
		t.Fatalf("listed %d rows, want %d", len(rows), n)
	}
	for i, r := range rows {
		if want := fmt.Sprintf("b/k%03d", i); r.Path != want {
			t.Fatalf("row %d is %q, want %q (sorted)", i, r.Path, want)
		}
	}
}

// `s3cond leases list --config` on DynamoDB reads the table as GET /leases
// does, a bounded Scan at a time resumed at the last key, never the whole
// table in one call.
func TestListScansDynamoDBAPageAtATime(t *testing.T) {
	var recorder scanRecorder
	endpoint := recorder.front(t, testservers.StartDynalite(t))
	const rows, pageRows = 25, 10
	store := openFilledStore(t, rows,
		"S3COND_LEASE_STORE=dynamodb",
		"S3COND_LEASE_DYNAMODB_ENDPOINT="+endpoint,
		"S3COND_LEASE_DYNAMODB_TABLE=paged",
		"S3COND_LEASE_DYNAMODB_CREDENTIALS_SOURCE=static",
		"S3COND_LEASE_DYNAMODB_CREDENTIALS_ACCESS_KEY_ID=testing",
		"S3COND_LEASE_DYNAMODB_CREDENTIALS_SECRET_ACCESS_KEY=testing",
	)
	store.pageRows = pageRows

	listed, err := store.List(context.Background(), "b/")
	if err != nil {
		t.Fatal(err)
	}
	requireRows(t, listed, rows)
	recorder.mu.Lock()
	defer recorder.mu.Unlock()
	// 26 items (the row under other/ is read, then filtered out): 3 pages.
	if len(recorder.scans) < 3 {
		t.Fatalf("the listing took %d Scans, want a page of at most %d items each: %+v", len(recorder.scans), pageRows, recorder.scans)
	}
	for i, scan := range recorder.scans {
		if scan.limit == 0 || scan.limit > pageRows || scan.scanned > pageRows {
			t.Errorf("Scan %d asked Limit %d and read %d items; want at most %d", i, scan.limit, scan.scanned, pageRows)
		}
	}
}

// countingPages stands between a Store and its real table and records the
// limit of every ListPage call and how many rows it answered.
type countingPages struct {
	dynamolease.Table
	mu    sync.Mutex
	calls []scanCall
}

func (c *countingPages) ListPage(ctx context.Context, prefix, after string, limit int) ([]dynamolease.Record, string, error) {
	rows, next, err := c.Table.(dynamolease.PageLister).ListPage(ctx, prefix, after, limit)
	c.mu.Lock()
	c.calls = append(c.calls, scanCall{limit: limit, scanned: len(rows)})
	c.mu.Unlock()
	return rows, next, err
}

// On etcd, the listing is range reads of at most a page each, resumed
// after the last key, as GET /leases reads them.
func TestListReadsEtcdAPageAtATime(t *testing.T) {
	cluster := testservers.StartEtcdClusterOf(t, 1)
	const rows, pageRows = 25, 10
	store := openFilledStore(t, rows,
		"S3COND_LEASE_STORE=etcd",
		"S3COND_LEASE_ETCD_ENDPOINTS="+strings.Join(cluster.Endpoints(), ","),
	)
	etcd := store.kind.(etcdStore)
	counting := &countingPages{Table: etcd.table}
	etcd.table = counting
	store.kind, store.pageRows = etcd, pageRows

	listed, err := store.List(context.Background(), "b/")
	if err != nil {
		t.Fatal(err)
	}
	requireRows(t, listed, rows)
	counting.mu.Lock()
	defer counting.mu.Unlock()
	if len(counting.calls) != 3 {
		t.Fatalf("the listing took %d page reads, want 3 of at most %d rows: %+v", len(counting.calls), pageRows, counting.calls)
	}
	for i, call := range counting.calls {
		if call.limit != pageRows || call.scanned > pageRows {
			t.Errorf("page %d asked %d rows and got %d; want at most %d", i, call.limit, call.scanned, pageRows)
		}
	}
}

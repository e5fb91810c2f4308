package metrics

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/proxy"
	"github.com/s3cond/s3cond/s3err"
)

// failingTable stands for a lease table whose every call fails with err.
type failingTable struct{ err error }

func (f failingTable) Create(context.Context, dynamolease.Record) (*dynamolease.Record, error) {
	return nil, f.err
}

func (f failingTable) Replace(context.Context, dynamolease.Record, uint64) (*dynamolease.Record, error) {
	return nil, f.err
}
func (f failingTable) Get(context.Context, string, string) (*dynamolease.Record, error) {
	return nil, f.err
}

func TestLeaseStoreErrorsExcludeLostConditions(t *testing.T) {
	m := New(prometheus.NewRegistry())
	ctx := context.Background()
	lost := m.InstrumentTable(failingTable{dynamolease.ErrConditionFailed})
	_, _ = lost.Create(ctx, dynamolease.Record{})
	_, _ = lost.Replace(ctx, dynamolease.Record{}, 0)
	down := m.InstrumentTable(failingTable{errors.New("connection refused")})
	_, _ = down.Get(ctx, "p", "*")
	_, _ = down.Get(ctx, "p", "*")

	if got := testutil.ToFloat64(m.leaseStoreErrors.WithLabelValues("create")); got != 0 {
		t.Errorf("a lost create counted as %v errors", got)
	}
	if got := testutil.ToFloat64(m.leaseStoreErrors.WithLabelValues("get")); got != 2 {
		t.Errorf("get errors = %v, want 2", got)
	}
	if got := testutil.CollectAndCount(m.leaseStoreDuration); got != 3 {
		t.Errorf("timed %d operations' series, want create, replace and get", got)
	}
}

func TestBackendErrorsByKind(t *testing.T) {
	m := New(prometheus.NewRegistry())
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/broken" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	client := &http.Client{Transport: m.InstrumentTransport(http.DefaultTransport)}
	for _, path := range []string{"/ok", "/broken"} {
		resp, err := client.Get(backend.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	backend.Close()
	if _, err := client.Head(backend.URL + "/gone"); err == nil {
		t.Fatal("a closed backend answered")
	}
	req, _ := http.NewRequest("PROPFIND", backend.URL, nil)
	_, _ = client.Do(req)

	for _, c := range []struct {
		method, kind string
		want         float64
	}{
		{"GET", "status_5xx", 1}, {"HEAD", "transport", 1}, {"other", "transport", 1}, {"GET", "transport", 0},
	} {
		if got := testutil.ToFloat64(m.backendErrors.WithLabelValues(c.method, c.kind)); got != c.want {
			t.Errorf("backend errors %s/%s = %v, want %v", c.method, c.kind, got, c.want)
		}
	}
}

func TestAcquireResults(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{nil, "acquired"},
		{fmt.Errorf("waited: %w", dynamolease.ErrWaitBudgetExceeded), "wait_budget_exceeded"},
		{&dynamolease.StoreError{Op: "get", Err: errors.New("down")}, "store_error"},
		{fmt.Errorf("lease table get: %w", context.Canceled), "cancelled"},
		{s3err.New(s3err.PreconditionFailed), "precondition"},
		{errors.New("something else"), "error"},
	} {
		if got := acquireResult(c.err); got != c.want {
			t.Errorf("acquireResult(%v) = %s, want %s", c.err, got, c.want)
		}
	}
	m := New(prometheus.NewRegistry())
	m.AcquireDone(30*time.Millisecond, nil)
	m.TookOver(true)
	m.TookOver(false)
	m.TookOver(false)
	if got := testutil.ToFloat64(m.leaseTakeovers.WithLabelValues("stale")); got != 2 {
		t.Errorf("stale takeovers = %v", got)
	}
	if got := testutil.ToFloat64(m.leaseAcquires.WithLabelValues("acquired")); got != 1 {
		t.Errorf("acquisitions = %v", got)
	}
}

func TestObserveRequestLeavesUnconditionalWritesOutOfConditionalOutcomes(t *testing.T) {
	m := New(prometheus.NewRegistry())
	m.ObserveRequest(proxy.RequestRecord{Operation: "PutObject", Status: 200, BytesIn: 10})
	m.ObserveRequest(proxy.RequestRecord{Operation: "PutObject", Status: 409, ConditionalOutcome: "conflict"})
	if got := sumOf(t, m.conditional); got != 1 {
		t.Errorf("conditional writes counted = %v, want only the conflict", got)
	}
	if got := testutil.ToFloat64(m.conditional.WithLabelValues("PutObject", "conflict")); got != 1 {
		t.Errorf("conflicts = %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.bytesIn.WithLabelValues("PutObject")); got != 10 {
		t.Errorf("bytes in = %v", got)
	}
	if got := sumOf(t, m.signatureFailures); got != 0 {
		t.Errorf("signature failures counted without a failure: %v", got)
	}
}

// TestObserveRequestSeriesByOperationAndStatus checks that the cached series
// are the ones labelled with each request's own operation and status.
func TestObserveRequestSeriesByOperationAndStatus(t *testing.T) {
	m := New(prometheus.NewRegistry())
	for range 3 {
		m.ObserveRequest(proxy.RequestRecord{Operation: "GetObject", Status: 200, BytesOut: 5, Duration: time.Millisecond})
	}
	m.ObserveRequest(proxy.RequestRecord{Operation: "GetObject", Status: 404})
	m.ObserveRequest(proxy.RequestRecord{Operation: "PutObject", Status: 200, BytesIn: 7})
	for _, c := range []struct {
		op, status string
		want       float64
	}{{"GetObject", "200", 3}, {"GetObject", "404", 1}, {"PutObject", "200", 1}} {
		if got := testutil.ToFloat64(m.requests.WithLabelValues(c.op, c.status)); got != c.want {
			t.Errorf("requests{%s,%s} = %v, want %v", c.op, c.status, got, c.want)
		}
	}
	if got := testutil.ToFloat64(m.bytesOut.WithLabelValues("GetObject")); got != 15 {
		t.Errorf("GetObject bytes out = %v, want 15", got)
	}
	if got := testutil.ToFloat64(m.bytesIn.WithLabelValues("PutObject")); got != 7 {
		t.Errorf("PutObject bytes in = %v, want 7", got)
	}
	if got := testutil.CollectAndCount(m.requestDuration); got != 2 {
		t.Errorf("duration series = %d, want one per operation", got)
	}
}

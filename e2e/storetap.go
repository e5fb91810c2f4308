package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"

	"github.com/s3cond/s3cond/internal/testkit"
)

// StoreTap is an HTTP reverse proxy between s3cond and its store that
// records the write conditions of each PUT and POST going through, and
// reports the store work requests (CopyObject, CompleteMultipartUpload):
// when one was written to the store, and when the store answered it. Such
// work goes on at the store however its sender ends: the tap keeps the
// store's request open when s3cond's side goes away (SIGKILL), as
// versitygw itself copies on after the s3cond that asked is gone (issue
// 24), so the test sees when the work lands. It keeps the Host header
// s3cond signed.
type StoreTap struct {
	URL  string
	Work testkit.Events[TappedWork]
	// Writes are the PUT and POST requests through the tap, as sent.
	Writes testkit.Events[TappedWrite]
}

// TappedWrite is a PUT or POST through the tap and its write conditions.
type TappedWrite struct {
	Method, Path, RawQuery string
	IfNoneMatch, IfMatch   string
	Copy                   bool // a CopyObject (X-Amz-Copy-Source, no uploadId)
}

// TappedWork is one event of a CopyObject or CompleteMultipartUpload
// through the tap: Sent once its request is written to the store, then
// Answered with the store's status.
type TappedWork struct {
	Path     string // the destination, /bucket/key
	Sent     bool
	Answered bool
	Status   int
	At       time.Time // when the tap saw it
}

// NewStoreTap starts a tap in front of the store at target; it closes when
// the test ends.
func NewStoreTap(t testing.TB, target string) *StoreTap {
	t.Helper()
	to, err := url.Parse(target)
	if err != nil {
		t.Fatalf("parse %s: %v", target, err)
	}
	tap := &StoreTap{}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(to)
			pr.Out.Host = pr.In.Host
		},
		Transport:     tapTransport{tap: tap, next: http.DefaultTransport},
		FlushInterval: -1,
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	tap.URL = srv.URL
	return tap
}

type tapTransport struct {
	tap  *StoreTap
	next http.RoundTripper
}

func (tt tapTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	isCopy := r.Method == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") != "" && !r.URL.Query().Has("uploadId")
	if r.Method == http.MethodPut || r.Method == http.MethodPost {
		tt.tap.Writes.Add(TappedWrite{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery,
			IfNoneMatch: r.Header.Get("If-None-Match"), IfMatch: r.Header.Get("If-Match"), Copy: isCopy})
	}
	isComplete := r.Method == http.MethodPost && r.URL.Query().Has("uploadId")
	if !isCopy && !isComplete {
		return tt.next.RoundTrip(r)
	}
	path := r.URL.Path
	trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) {
		tt.tap.Work.Add(TappedWork{Path: path, Sent: true, At: time.Now()})
	}}
	ctx := httptrace.WithClientTrace(context.WithoutCancel(r.Context()), trace)
	resp, err := tt.next.RoundTrip(r.WithContext(ctx))
	status := 0
	if err == nil {
		status = resp.StatusCode
	}
	tt.tap.Work.Add(TappedWork{Path: path, Answered: true, Status: status, At: time.Now()})
	return resp, err
}

package backendhttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// spliceFixture is a SpliceTransport in front of an httptest server (a
// stand-in for the backend's HTTP/1.1 server), counting the connections it
// dials.
type spliceFixture struct {
	transport *SpliceTransport
	backend   *httptest.Server
	dials     atomic.Int32
}

func newSpliceFixture(t *testing.T, handler http.HandlerFunc) *spliceFixture {
	t.Helper()
	f := &spliceFixture{backend: httptest.NewServer(handler)}
	t.Cleanup(f.backend.Close)
	next := NewBackendTransport()
	dial := next.DialContext
	next.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		f.dials.Add(1)
		return dial(ctx, network, addr)
	}
	f.transport = NewSpliceTransport(next)
	t.Cleanup(f.transport.CloseIdleConnections)
	return f
}

func (f *spliceFixture) get(t *testing.T, ctx context.Context, path string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.backend.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f.transport.RoundTrip(req)
}

func servePattern(size int) http.HandlerFunc {
	body := bytes.Repeat([]byte("0123456789abcdef"), size/16+1)[:size]
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(size))
		w.Header().Set("ETag", `"pattern"`)
		_, _ = w.Write(body)
	}
}

func TestSpliceTransportReadsBodiesAndReusesConnections(t *testing.T) {
	const size = 3<<20 + 17
	f := newSpliceFixture(t, servePattern(size))
	want := bytes.Repeat([]byte("0123456789abcdef"), size/16+1)[:size]
	for i := range 5 {
		resp, err := f.get(t, context.Background(), "/bucket/key")
		if err != nil {
			t.Fatalf("GET %d: %v", i, err)
		}
		if resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") != `"pattern"` || resp.ContentLength != size {
			t.Fatalf("GET %d: status %d, ETag %q, length %d", i, resp.StatusCode, resp.Header.Get("ETag"), resp.ContentLength)
		}
		var got bytes.Buffer
		if i%2 == 0 {
			_, err = io.Copy(&got, resp.Body) // through WriteTo
		} else {
			_, err = got.ReadFrom(readerOnly{resp.Body}) // through Read
		}
		if err != nil || !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("GET %d: %d bytes, err %v", i, got.Len(), err)
		}
		resp.Body.Close()
	}
	if n := f.dials.Load(); n != 1 {
		t.Fatalf("5 sequential GETs dialled %d connections, want 1 kept alive", n)
	}
}

// spliceWriter records what WriteTo hands to a writer's ReadFrom.
type spliceWriter struct {
	bytes.Buffer
	sources []string
}

func (w *spliceWriter) ReadFrom(src io.Reader) (int64, error) {
	desc := fmt.Sprintf("%T", src)
	if lr, ok := src.(*io.LimitedReader); ok {
		desc += fmt.Sprintf("(%T)", lr.R)
	}
	w.sources = append(w.sources, desc)
	return w.Buffer.ReadFrom(src)
}

func TestSpliceTransportHandsTheSocketToReadFrom(t *testing.T) {
	const size = 1 << 20
	f := newSpliceFixture(t, servePattern(size))
	resp, err := f.get(t, context.Background(), "/b/k")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var w spliceWriter
	n, err := io.Copy(&w, resp.Body)
	if err != nil || n != size || w.Len() != size {
		t.Fatalf("copied %d (buffer %d), err %v", n, w.Len(), err)
	}
	// The bytes already buffered with the headers go by Write; the rest of
	// the body is the socket itself, bounded to the body's length: what
	// net.TCPConn.ReadFrom splices.
	if len(w.sources) != 1 || w.sources[0] != "*io.LimitedReader(*net.TCPConn)" {
		t.Fatalf("ReadFrom got %v, want one length-limited *net.TCPConn", w.sources)
	}
}

func TestSpliceTransportChunkedResponses(t *testing.T) {
	f := newSpliceFixture(t, func(w http.ResponseWriter, r *http.Request) {
		for i := range 3 {
			fmt.Fprintf(w, "part %d;", i)
			w.(http.Flusher).Flush() // no Content-Length: chunked
		}
	})
	for i := range 2 {
		resp, err := f.get(t, context.Background(), "/")
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(got) != "part 0;part 1;part 2;" || resp.ContentLength != -1 {
			t.Fatalf("GET %d: %q, length %d, err %v", i, got, resp.ContentLength, err)
		}
	}
	if n := f.dials.Load(); n != 1 {
		t.Fatalf("dialled %d connections, want the chunked one kept alive", n)
	}
}

func TestSpliceTransportLeavesOtherRequestsToNext(t *testing.T) {
	f := newSpliceFixture(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %d", r.Method, len(body))
	})
	large := strings.Repeat("x", MaxBufferedPUT+1)
	for _, tc := range []struct {
		name, method string
		body         io.Reader
		length       int64
		backendSaw   string
	}{
		{"POST", http.MethodPost, strings.NewReader("data"), 4, "POST 4"},
		{"DELETE with a body", http.MethodDelete, strings.NewReader("data"), 4, "DELETE 4"},
		{"PUT of unknown length", http.MethodPut, io.MultiReader(strings.NewReader("data")), -1, "PUT 4"},
		{"PUT over the buffered size", http.MethodPut, strings.NewReader(large), int64(len(large)), fmt.Sprintf("PUT %d", len(large))},
		{"PUT without a body", http.MethodPut, nil, 0, "PUT 0"},
	} {
		req, _ := http.NewRequest(tc.method, f.backend.URL+"/b/k", tc.body)
		req.ContentLength = tc.length
		resp, err := f.transport.RoundTrip(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if _, ok := resp.Body.(*splicedBody); ok {
			t.Fatalf("%s was sent by SpliceTransport itself", tc.name)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(got) != tc.backendSaw {
			t.Fatalf("%s: backend saw %q, want %q", tc.name, got, tc.backendSaw)
		}
	}
}

func TestSpliceTransportRetriesAConnectionClosedWhileIdle(t *testing.T) {
	handler := servePattern(100)
	f := newSpliceFixture(t, handler)
	// Close every idle server-side connection between requests, as a
	// backend does when its keep-alive timeout passes.
	f.backend.Config.SetKeepAlivesEnabled(true)
	for i := range 3 {
		resp, err := f.get(t, context.Background(), "/b/k")
		if err != nil {
			t.Fatalf("GET %d after the backend dropped the idle connection: %v", i, err)
		}
		if got, err := io.ReadAll(resp.Body); err != nil || len(got) != 100 {
			t.Fatalf("GET %d: %d bytes, err %v", i, len(got), err)
		}
		resp.Body.Close()
		// It returns once the backend has closed them. Whether the FIN has
		// reached the idle socket by the next GET or not, that GET fails
		// before any answer on it and is sent again on a fresh connection.
		f.backend.CloseClientConnections()
	}
	if n := f.dials.Load(); n != 3 {
		t.Fatalf("dialled %d connections, want a fresh one after each close (3)", n)
	}
}

func TestSpliceTransportShortBodyIsAnErrorAndNotReused(t *testing.T) {
	f := newSpliceFixture(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/short" {
			// Promise 1000 bytes, send 10, then cut the connection.
			conn, buf, _ := w.(http.Hijacker).Hijack()
			fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n0123456789")
			buf.Flush()
			conn.Close()
			return
		}
		fmt.Fprint(w, "ok")
	})
	for _, via := range []string{"WriteTo", "Read"} {
		resp, err := f.get(t, context.Background(), "/short")
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if via == "WriteTo" {
			_, err = io.Copy(&got, resp.Body)
		} else {
			_, err = got.ReadFrom(readerOnly{resp.Body})
		}
		resp.Body.Close()
		if !errors.Is(err, io.ErrUnexpectedEOF) || got.String() != "0123456789" {
			t.Fatalf("%s: got %q, err %v; want the 10 bytes and io.ErrUnexpectedEOF", via, got.String(), err)
		}
	}
	resp, err := f.get(t, context.Background(), "/ok")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n := f.dials.Load(); n != 3 {
		t.Fatalf("dialled %d connections, want 3: a cut-off connection is never reused", n)
	}
}

func TestSpliceTransportCancelEndsTheBody(t *testing.T) {
	release := make(chan struct{})
	f := newSpliceFixture(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		fmt.Fprint(w, "first")
		w.(http.Flusher).Flush()
		<-release
	})
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := f.get(t, ctx, "/slow")
	if err != nil {
		t.Fatal(err)
	}
	// The body is under way (its first bytes are in) and the backend holds
	// the rest back when the request is cancelled.
	first := make([]byte, len("first"))
	if _, err := io.ReadFull(resp.Body, first); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, resp.Body)
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the body read succeeded after its request was cancelled")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelling the request did not end the body read")
	}
	resp.Body.Close()
	if _, ok := f.transport.idle[hostPort(resp.Request.URL)]; ok {
		t.Fatal("a cancelled connection went back to the pool")
	}
}

func TestSpliceTransportResponseHeaderTimeout(t *testing.T) {
	release := make(chan struct{})
	f := newSpliceFixture(t, func(w http.ResponseWriter, r *http.Request) { <-release })
	defer close(release)
	f.transport.next.ResponseHeaderTimeout = 50 * time.Millisecond
	start := time.Now()
	_, err := f.get(t, context.Background(), "/hang")
	var netErr net.Error
	if !errors.As(err, &netErr) || !netErr.Timeout() {
		t.Fatalf("err %v, want a timeout", err)
	}
	if time.Since(start) > 3*time.Second {
		t.Fatalf("took %v", time.Since(start))
	}
}

func TestSpliceTransportCopiesSmallRemainders(t *testing.T) {
	// The headers go out first and the body only once the client has read
	// them, so that the body is not in the buffer that read the headers.
	const size = 10 << 10
	headRead := make(chan struct{})
	f := newSpliceFixture(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(size))
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-headRead
		_, _ = w.Write(bytes.Repeat([]byte("s"), size))
	})
	resp, err := f.get(t, context.Background(), "/small")
	close(headRead)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var w spliceWriter
	if n, err := io.Copy(&w, resp.Body); err != nil || n != size {
		t.Fatalf("copied %d, err %v", n, err)
	}
	if len(w.sources) != 0 {
		t.Fatalf("a %d-byte remainder went to ReadFrom (%v): below minSpliceSize it is copied", size, w.sources)
	}
}

func TestSpliceTransportRetryDialsWhenEveryIdleConnectionIsDead(t *testing.T) {
	f := newSpliceFixture(t, servePattern(100))
	// Three responses open at once leave three idle connections.
	var open []*http.Response
	for range 3 {
		resp, err := f.get(t, context.Background(), "/b/k")
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, resp)
	}
	for _, resp := range open {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	// The backend restarts: every idle connection is dead. The call returns
	// once the backend has closed them; whether the FINs have reached the
	// idle sockets yet or not, the first attempt fails before any answer and
	// the retry dials.
	f.backend.CloseClientConnections()
	resp, err := f.get(t, context.Background(), "/b/k")
	if err != nil {
		t.Fatalf("GET after the backend dropped every idle connection: %v", err)
	}
	resp.Body.Close()
	if n := f.dials.Load(); n != 4 {
		t.Fatalf("dialled %d connections, want 3 and one fresh for the retry", n)
	}
}

func TestSpliceTransportHeadHasNoBody(t *testing.T) {
	f := newSpliceFixture(t, servePattern(1000))
	for i := range 3 {
		req, _ := http.NewRequest(http.MethodHead, f.backend.URL+"/b/k", nil)
		resp, err := f.transport.RoundTrip(req)
		if err != nil {
			t.Fatalf("HEAD %d: %v", i, err)
		}
		// Content-Length describes the object; no body follows a HEAD.
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || len(got) != 0 || resp.ContentLength != 1000 || resp.Header.Get("ETag") != `"pattern"` {
			t.Fatalf("HEAD %d: body %d bytes, err %v, length %d", i, len(got), err, resp.ContentLength)
		}
	}
	// A GET on the same connection still finds its response where it starts.
	resp, err := f.get(t, context.Background(), "/b/k")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || len(got) != 1000 {
		t.Fatalf("GET after HEADs: %d bytes, err %v", len(got), err)
	}
	if n := f.dials.Load(); n != 1 {
		t.Fatalf("dialled %d connections, want 1 kept alive through HEADs", n)
	}
}

func TestSpliceTransportDoesNotRetryATimeout(t *testing.T) {
	release := make(chan struct{})
	f := newSpliceFixture(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang" {
			<-release
		}
		fmt.Fprint(w, "ok")
	})
	defer close(release)
	f.transport.next.ResponseHeaderTimeout = 50 * time.Millisecond
	resp, err := f.get(t, context.Background(), "/ok")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	// On the kept-alive connection, the backend is slow, not gone.
	if _, err := f.get(t, context.Background(), "/hang"); err == nil {
		t.Fatal("a GET whose answer never came succeeded")
	}
	if n := f.dials.Load(); n != 1 {
		t.Fatalf("dialled %d connections, want 1: a timeout is not a dead connection to retry", n)
	}
}

package backendhttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// echoBodies answers each request with its method and body, and counts the
// requests that reached it.
func echoBodies(seen *atomic.Int32) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("ETag", fmt.Sprintf(`"%d"`, len(body)))
		fmt.Fprintf(w, "%s %s", r.Method, body)
	}
}

func (f *spliceFixture) send(t *testing.T, method, path string, body io.Reader, length int64) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequest(method, f.backend.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = length
	if body == nil {
		req.Body = http.NoBody
	}
	return f.transport.RoundTrip(req)
}

func readAndClose(t *testing.T, resp *http.Response) string {
	t.Helper()
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return string(got)
}

func TestSpliceTransportSendsSmallPutsAndDeletesOnItsConnections(t *testing.T) {
	var seen atomic.Int32
	f := newSpliceFixture(t, echoBodies(&seen))
	full := strings.Repeat("z", MaxBufferedPUT)
	for i, body := range []string{"a", strings.Repeat("4", 4096), full} {
		resp, err := f.send(t, http.MethodPut, "/b/k", strings.NewReader(body), int64(len(body)))
		if err != nil {
			t.Fatalf("PUT %d: %v", i, err)
		}
		if _, ok := resp.Body.(*splicedBody); !ok {
			t.Fatalf("PUT %d of %d bytes went to the fallback transport", i, len(body))
		}
		if got := readAndClose(t, resp); got != "PUT "+body || resp.Header.Get("ETag") != fmt.Sprintf(`"%d"`, len(body)) {
			t.Fatalf("PUT %d: backend answered %.20q…, ETag %s", i, got, resp.Header.Get("ETag"))
		}
	}
	resp, err := f.send(t, http.MethodDelete, "/b/k", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := readAndClose(t, resp); got != "DELETE " {
		t.Fatalf("DELETE: backend answered %q", got)
	}
	if n := f.dials.Load(); n != 1 {
		t.Fatalf("dialled %d connections, want 1 kept alive for every request", n)
	}
}

// failingBody stands for a verifying client body whose signature or
// checksum fails at its end: every byte but the verdict arrives.
type failingBody struct {
	data   io.Reader
	err    error
	closed bool
}

func (b *failingBody) Read(p []byte) (int, error) {
	n, err := b.data.Read(p)
	if err == io.EOF {
		return n, b.err
	}
	return n, err
}

func (b *failingBody) Close() error { b.closed = true; return nil }

func TestSpliceTransportSendsNothingOfABadSmallBody(t *testing.T) {
	var seen atomic.Int32
	f := newSpliceFixture(t, echoBodies(&seen))
	// verdict stands for the verifying body's error (s3err SignatureDoesNotMatch).
	verdict := errors.New("signature does not match")
	for _, tc := range []struct {
		name    string
		body    io.Reader
		length  int64
		wantErr func(error) bool
	}{
		{"failed verification", &failingBody{data: strings.NewReader("0123456789"), err: verdict}, 10,
			func(err error) bool { return errors.Is(err, verdict) }},
		{"shorter than declared", strings.NewReader("0123"), 10,
			func(err error) bool { return errors.Is(err, ErrShortBody) }},
		{"longer than declared", strings.NewReader("0123456789abc"), 10,
			func(err error) bool { return errors.Is(err, ErrLongBody) }},
	} {
		resp, err := f.send(t, http.MethodPut, "/b/k", tc.body, tc.length)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("%s: the request was sent", tc.name)
		}
		if !tc.wantErr(err) {
			t.Fatalf("%s: error %v", tc.name, err)
		}
		if fb, ok := tc.body.(*failingBody); ok && !fb.closed {
			t.Fatalf("%s: the request body was not closed", tc.name)
		}
	}
	if n := seen.Load(); n != 0 {
		t.Fatalf("the backend saw %d requests, want none: nothing of a bad body is sent", n)
	}
	if n := f.dials.Load(); n != 0 {
		t.Fatalf("dialled %d connections for requests never sent", n)
	}
}

func TestSpliceTransportResendsASmallPutOnADeadIdleConnection(t *testing.T) {
	var seen atomic.Int32
	f := newSpliceFixture(t, echoBodies(&seen))
	for i := range 3 {
		body := fmt.Sprintf("body %d", i)
		resp, err := f.send(t, http.MethodPut, "/b/k", strings.NewReader(body), int64(len(body)))
		if err != nil {
			t.Fatalf("PUT %d after the backend dropped the idle connection: %v", i, err)
		}
		if got := readAndClose(t, resp); got != "PUT "+body {
			t.Fatalf("PUT %d: backend answered %q", i, got)
		}
		// Returns once the backend has closed its end: the idle
		// connection is dead, whether its FIN or a reset is what the
		// next PUT meets.
		f.backend.CloseClientConnections()
	}
	if n, d := seen.Load(), f.dials.Load(); n != 3 || d != 3 {
		t.Fatalf("backend saw %d requests over %d connections, want 3 over 3 (each PUT once, resent whole)", n, d)
	}
}

func TestSpliceTransportReadsTheAnswerOfABackendThatStoppedReading(t *testing.T) {
	// A backend may answer a PUT before reading its body (an error it can
	// tell from the head) and close the connection.
	f := newSpliceFixture(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, "<Error><Code>AccessDenied</Code></Error>")
	})
	body := strings.Repeat("b", MaxBufferedPUT)
	resp, err := f.send(t, http.MethodPut, "/b/k", strings.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	if got := readAndClose(t, resp); resp.StatusCode != http.StatusForbidden || !strings.Contains(got, "AccessDenied") {
		t.Fatalf("got %d %q, want the backend's 403", resp.StatusCode, got)
	}
}

func TestSpliceTransportCancelledPutIsNotSent(t *testing.T) {
	var seen atomic.Int32
	f := newSpliceFixture(t, echoBodies(&seen))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, f.backend.URL+"/b/k", bytes.NewReader([]byte("data")))
	if resp, err := f.transport.RoundTrip(req); err == nil {
		resp.Body.Close()
		t.Fatal("a cancelled PUT succeeded")
	}
	if n := seen.Load(); n != 0 {
		t.Fatalf("the backend saw %d requests of a cancelled PUT", n)
	}
}

func TestSplicedEmptyBodyWritesNothingAndAllocatesNothing(t *testing.T) {
	var seen atomic.Int32
	f := newSpliceFixture(t, func(w http.ResponseWriter, r *http.Request) { seen.Add(1) })
	resp, err := f.send(t, http.MethodPut, "/b/k", strings.NewReader("data"), 4)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	allocs := testing.AllocsPerRun(10, func() {
		if n, err := resp.Body.(io.WriterTo).WriteTo(&got); n != 0 || err != nil {
			t.Fatalf("WriteTo of an empty body: %d bytes, %v", n, err)
		}
	})
	// An S3 PUT or DELETE answer has no body; copying it must not cost a
	// copy buffer per request.
	if allocs != 0 {
		t.Fatalf("WriteTo of an empty body allocated %.0f times", allocs)
	}
	resp.Body.Close()
	if _, err := resp.Body.(io.WriterTo).WriteTo(&got); err == nil {
		t.Fatal("WriteTo after Close succeeded")
	}
}

package app

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// slowBody stands for a client uploading over a slow link: it sends its
// first part at once, then waits for the test to let the rest go.
type slowBody struct {
	parts   []string
	started chan struct{} // closed once the first part was read: later reads wait for resume
	resume  chan struct{} // the test closes it to let the rest go
}

func newSlowBody(parts ...string) *slowBody {
	return &slowBody{parts: parts, started: make(chan struct{}), resume: make(chan struct{})}
}

func (b *slowBody) Read(p []byte) (int, error) {
	if len(b.parts) == 0 {
		return 0, io.EOF
	}
	select {
	case <-b.started:
		<-b.resume
	default:
		defer close(b.started)
	}
	n := copy(p, b.parts[0])
	b.parts[0] = b.parts[0][n:]
	if b.parts[0] == "" {
		b.parts = b.parts[1:]
	}
	return n, nil
}

type serveResult struct{ err error }

// closeReporter is a listener that reports when Serve has closed it.
type closeReporter struct {
	net.Listener
	once   sync.Once
	closed chan struct{}
}

func (l *closeReporter) Close() error {
	err := l.Listener.Close()
	l.once.Do(func() { close(l.closed) })
	return err
}

// announceRequests makes a's handler report each request it starts on the
// returned channel, so a test knows the server holds it.
func announceRequests(a *App) <-chan struct{} {
	arrived := make(chan struct{}, 16)
	next := a.Handler
	a.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		next.ServeHTTP(w, r)
	})
	return arrived
}

func startServing(t *testing.T, a *App, grace time.Duration) (url string, stop context.CancelFunc, done <-chan serveResult) {
	t.Helper()
	return serveOn(t, a, listen(t), grace)
}

func serveOn(t *testing.T, a *App, ln net.Listener, grace time.Duration) (url string, stop context.CancelFunc, done <-chan serveResult) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	result := make(chan serveResult, 1)
	go func() {
		result <- serveResult{a.Serve(ctx, ServeOptions{Listener: ln, ShutdownGrace: grace, Log: zerolog.Nop()})}
	}()
	t.Cleanup(cancel)
	return "http://" + ln.Addr().String(), cancel, result
}

// putAsync sends a signed PutObject of body and reports its status.
func putAsync(t *testing.T, url string, body io.Reader, size int64, header http.Header) <-chan int {
	t.Helper()
	req := signed(t, http.MethodPut, url, body, header)
	req.ContentLength = size
	status := make(chan int, 1)
	go func() {
		// A fresh transport: a kept-alive connection would hide whether
		// the listener still accepts.
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := client.Do(req)
		if err != nil {
			status <- -1
			return
		}
		resp.Body.Close()
		status <- resp.StatusCode
	}()
	return status
}

func TestShutdownLetsAnUploadInFlightFinish(t *testing.T) {
	a := build(t, devConfig(t))
	arrived := announceRequests(a)
	ln := &closeReporter{Listener: listen(t), closed: make(chan struct{})}
	url, stop, done := serveOn(t, a, ln, 20*time.Second)
	body := newSlowBody("first half, ", "second half")
	size := int64(len("first half, second half"))
	status := putAsync(t, url+"/shutdown-bucket/slow", body, size, http.Header{"If-None-Match": {"*"}})
	<-arrived

	stop() // SIGTERM
	// New connections are refused while the upload is still in flight.
	select {
	case <-ln.closed:
	case <-time.After(10 * time.Second):
		t.Fatal("shutdown did not close the listener")
	}
	if conn, err := net.DialTimeout("tcp", strings.TrimPrefix(url, "http://"), time.Second); err == nil {
		conn.Close()
		t.Fatal("the listener still accepts connections after shutdown began")
	}
	select {
	case r := <-done:
		t.Fatalf("Serve returned (%v) with an upload in flight", r.err)
	default:
	}

	close(body.resume)
	if got := <-status; got != http.StatusOK {
		t.Fatalf("the upload in flight got %d, want 200", got)
	}
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("Serve: %v", r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return once the upload finished")
	}
	// The object reached the backend (the embedded store checks no signatures).
	resp, err := a.Embedded.HTTPClient().Get(a.BackendEndpoint + "/shutdown-bucket/slow")
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(stored) != "first half, second half" {
		t.Fatalf("backend holds %q", stored)
	}
}

func TestShutdownCancelsWhatOutlastsTheGrace(t *testing.T) {
	a := build(t, devConfig(t))
	arrived := announceRequests(a)
	const grace = 300 * time.Millisecond
	url, stop, done := startServing(t, a, grace)
	body := newSlowBody("never ", "finished")
	status := putAsync(t, url+"/shutdown-bucket/stuck", body, int64(len("never finished")), http.Header{"If-None-Match": {"*"}})
	<-arrived

	start := time.Now()
	stop()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("Serve: %v", r.err)
		}
	case <-time.After(grace + drainTimeout):
		t.Fatal("Serve did not return after the grace period")
	}
	if took := time.Since(start); took < grace {
		t.Errorf("Serve returned after %s, before the %s grace was over", took, grace)
	}
	// The client learns once it tries to send the rest over the closed connection.
	close(body.resume)
	if got := <-status; got == http.StatusOK {
		t.Fatal("the stuck upload succeeded")
	}

	// Nothing of the cancelled write is left holding the key: a conditional
	// create of it through a new listener succeeds at once.
	url, stop, _ = startServing(t, a, time.Second)
	defer stop()
	start = time.Now()
	if got := <-putAsync(t, url+"/shutdown-bucket/stuck", strings.NewReader("v1"), 2, http.Header{"If-None-Match": {"*"}}); got != http.StatusOK {
		t.Fatalf("create after the cancelled upload: %d", got)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("the create waited %s: a lease of the cancelled upload was left behind", took)
	}
}

package proxy

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/sigv4"
)

// pipeWriter is the response side of a client connection made with
// net.Pipe: it records the answer, and its read deadlines are the pipe's,
// as net/http's response writer passes them to the TCP connection.
type pipeWriter struct {
	*httptest.ResponseRecorder
	conn net.Conn
}

func (w pipeWriter) SetReadDeadline(t time.Time) error  { return w.conn.SetReadDeadline(t) }
func (w pipeWriter) SetWriteDeadline(t time.Time) error { return w.conn.SetWriteDeadline(t) }

// formOverPipe is an anonymous POST Object whose body the returned client
// end sends, as slowly as the test likes.
func formOverPipe() (*http.Request, net.Conn, pipeWriter) {
	server, client := net.Pipe()
	r := httptest.NewRequest(http.MethodPost, "http://s3cond/"+bucketName, server)
	r.Header.Set("Content-Type", "multipart/form-data; boundary=XyZ")
	r.ContentLength = 1 << 20
	return r, client, pipeWriter{ResponseRecorder: httptest.NewRecorder(), conn: server}
}

// formProxy is a proxy whose backend is never reached: every request here
// ends before authentication is complete.
func formProxy(o Options) *Proxy {
	u, _ := url.Parse("http://127.0.0.1:1")
	o.Auth = sigv4.NewVerifier(staticKeys{}, "us-east-1")
	o.Access = staticKeys{}
	o.Backend = &Backend{Name: "default", Endpoint: u, Client: &http.Client{}}
	o.Log = zerolog.Nop()
	return New(o)
}

// The form phase of POST Object has a total deadline: a client sending
// one byte of a part header every 10 s never trips the 20 s idle timeout,
// and before this bound held its connection and buffer for as long as it
// liked (issue 23, item 2).
func TestPostFormFieldsHaveATotalDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := formProxy(Options{BodyIdleTimeout: 20 * time.Second, PostFormTimeout: 30 * time.Second})
		r, client, w := formOverPipe()
		answered := make(chan struct{})
		defer close(answered)
		go func() {
			defer client.Close()
			trickle := "--XyZ\r\nContent-Disposition: form-data; name=\"key\"\r\nX-Filler: " + strings.Repeat("a", 200)
			for i := range len(trickle) {
				select {
				case <-answered:
					return
				case <-time.After(10 * time.Second):
				}
				if _, err := client.Write([]byte{trickle[i]}); err != nil {
					return
				}
			}
		}()
		start := time.Now()
		p.ServeHTTP(w, r)
		took := time.Since(start)
		wantS3Code(t, w.ResponseRecorder, http.StatusBadRequest, "RequestTimeout")
		// After the 400, the rest of the body is drained for a moment.
		if took > 30*time.Second+drainTimeLimit {
			t.Fatalf("the trickled form was answered after %s, the bound is 30s", took)
		}
	})
}

// Requests not yet verified hold a slot each; with none free the answer is
// S3's 503 SlowDown, and the slot is back once the request is answered.
func TestUnauthenticatedRequestsInFlightAreCapped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := formProxy(Options{MaxUnauthenticated: 1})
		r, client, w := formOverPipe()
		defer client.Close()
		served := make(chan struct{})
		go func() { p.ServeHTTP(w, r); close(served) }()
		go func() { _, _ = client.Write([]byte("--XyZ\r\nContent-Disposition: form-data; name=\"key\"\r\n")) }()
		synctest.Wait() // the form is being read, holding the only slot

		over := httptest.NewRecorder()
		p.ServeHTTP(over, httptest.NewRequest(http.MethodGet, "http://s3cond/"+bucketName+"/k", nil))
		wantS3Code(t, over, http.StatusServiceUnavailable, "SlowDown")

		_ = client.Close()
		<-served
		after := httptest.NewRecorder()
		p.ServeHTTP(after, httptest.NewRequest(http.MethodGet, "http://s3cond/"+bucketName+"/k", nil))
		wantS3Code(t, after, http.StatusForbidden, "AccessDenied") // verified as anonymous, not granted
	})
}

func wantS3Code(t *testing.T, w *httptest.ResponseRecorder, status int, code string) {
	t.Helper()
	if w.Code != status || !strings.Contains(w.Body.String(), "<Code>"+code+"</Code>") {
		t.Fatalf("answer %d %s, want %d %s", w.Code, w.Body.String(), status, code)
	}
}

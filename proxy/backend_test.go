package proxy

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"testing"

	"github.com/s3cond/s3cond/internal/backendhttp"
	"github.com/s3cond/s3cond/s3err"
)

// timeoutError stands for a net.Error whose Timeout() is true, such as
// net/http's "timeout awaiting response headers".
type timeoutError struct{}

func (timeoutError) Error() string   { return "awaiting headers" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

func TestBackendErrorClassifiesByType(t *testing.T) {
	// A port nobody listens on: what a stopped backend gives.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	_, dialErr := http.Get("http://" + closed + "/")
	_, spliceErr := backendhttp.NewSpliceTransport(backendhttp.NewBackendTransport()).RoundTrip(mustRequest(t, "http://"+closed+"/"))

	cases := []struct {
		name string
		err  error
		want s3err.Code
	}{
		{"net/http dial refused", dialErr, s3err.ServiceUnavailable},
		{"splice dial refused", spliceErr, s3err.ServiceUnavailable},
		{"timeout", &url.Error{Op: "Get", URL: "http://b/", Err: timeoutError{}}, s3err.ServiceUnavailable},
		{"no such host", fmt.Errorf("wrapped: %w", &net.DNSError{Err: "no such host", Name: "b"}), s3err.ServiceUnavailable},
		// The word "dial" in a message is not a dial error.
		{"read reset", &net.OpError{Op: "read", Net: "tcp", Err: errors.New("dial-up modem hung up")}, s3err.BadGateway},
		{"s3 error kept", s3err.New(s3err.AccessDenied), s3err.AccessDenied},
		// A small PUT's body is read whole in backendhttp before it is sent.
		{"body short", &url.Error{Op: "Put", URL: "http://b/", Err: backendhttp.ErrShortBody}, s3err.IncompleteBody},
		{"body long", &url.Error{Op: "Put", URL: "http://b/", Err: backendhttp.ErrLongBody}, s3err.InvalidRequest},
	}
	for _, c := range cases {
		if c.err == nil {
			t.Fatalf("%s: no error to classify", c.name)
		}
		if got := backendError(c.err).Code; got != c.want {
			t.Errorf("%s (%v): %s, want %s", c.name, c.err, got, c.want)
		}
	}
}

func mustRequest(t *testing.T, target string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

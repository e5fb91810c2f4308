package sigv4

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/s3cond/s3cond/s3err"
)

const (
	backendAccessKey = "AKIDBACKEND"
	backendSecret    = "backend+secret/with=odd"
	backendRegion    = "us-east-1"
)

// seenRequest is what the fake backend received and concluded.
type seenRequest struct {
	requestURI string
	path       string
	rawQuery   string
	auth       *Request
	err        error
	body       []byte
	bodyErr    error
}

// newVerifyingBackend starts a real HTTP server standing for an S3 backend
// that checks SigV4: it authenticates every request with a Verifier holding
// the backend's credentials and reads the body through the verifying reader.
func newVerifyingBackend(t *testing.T) (*httptest.Server, <-chan seenRequest) {
	t.Helper()
	v := NewVerifier(staticCredentials{backendAccessKey: backendSecret}, backendRegion)
	seen := make(chan seenRequest, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := seenRequest{requestURI: r.RequestURI, path: r.URL.Path, rawQuery: r.URL.RawQuery}
		s.auth, s.err = v.Verify(r)
		if s.err == nil {
			s.body, s.bodyErr = io.ReadAll(s.auth.Body)
		}
		seen <- s
		if s.err != nil {
			s3err.Write(w, r, s.err, "test")
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	return srv, seen
}

func backendCredentials() aws.CredentialsProvider {
	return credentials.NewStaticCredentialsProvider(backendAccessKey, backendSecret, "")
}

// outboundRequest is a request as the proxy builds it for the backend: the
// key decoded in Path, the client's query bytes in RawQuery.
func outboundRequest(t *testing.T, base, method, key, rawQuery string, body io.Reader, length int64) *http.Request {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/bucket/" + key
	u.RawQuery = rawQuery
	r, err := http.NewRequestWithContext(context.Background(), method, u.String(), body)
	if err != nil {
		t.Fatal(err)
	}
	r.URL.Path, r.URL.RawPath, r.URL.RawQuery = u.Path, "", rawQuery
	r.ContentLength = length
	return r
}

func TestResignerRoundTrip(t *testing.T) {
	srv, seen := newVerifyingBackend(t)
	rt := NewResigner(srv.Client().Transport, backendCredentials(), backendRegion)

	keys := []string{
		"plain.txt",
		"dir/with space/and  two",
		"ünïcødé/日本語.bin",
		"a+b=c&d",
		"literal%2Fpercent%20",
		"!$'()*,;:@[]~-_.",
		"trailing/",
	}
	queries := []string{
		"",
		"uploads",
		"partNumber=1&uploadId=abc%2Fdef",
		"a=%7e&b=x+y&c&d=%2f%2F&e=%E2%9C%93&e=%e2%9c%93&f=",
		"prefix=a%20b&delimiter=%2F&list-type=2",
		"z=1&a=2&m&b=%20",
	}
	for _, key := range keys {
		for _, rawQuery := range queries {
			t.Run(key+"?"+rawQuery, func(t *testing.T) {
				r := outboundRequest(t, srv.URL, "GET", key, rawQuery, nil, 0)
				r.Header.Set("Authorization", "AWS4-HMAC-SHA256 client's, must not be forwarded")
				r.Header.Set("X-Amz-Meta-Note", "  spaced   value ")
				resp, err := rt.RoundTrip(r)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				s := <-seen
				if s.err != nil {
					t.Fatalf("backend rejected the signature: %v\nrequest URI %q", s.err, s.requestURI)
				}
				if s.auth.AccessKeyID != backendAccessKey {
					t.Fatalf("backend authenticated %q", s.auth.AccessKeyID)
				}
				if s.path != "/bucket/"+key {
					t.Fatalf("backend saw key %q, want %q", s.path, "/bucket/"+key)
				}
				// S3's canonical spelling, on which every backend agrees.
				if wirePath, _, _ := strings.Cut(s.requestURI, "?"); wirePath != "/bucket/"+uriEncode(key, false) {
					t.Fatalf("path on the wire %q, want S3's encoding %q", wirePath, "/bucket/"+uriEncode(key, false))
				}
				if s.rawQuery != rawQuery {
					t.Fatalf("backend saw query %q, want it unchanged: %q", s.rawQuery, rawQuery)
				}
				if r.Header.Get("Authorization") != "AWS4-HMAC-SHA256 client's, must not be forwarded" || r.Header.Get("X-Amz-Date") != "" {
					t.Fatal("RoundTrip mutated the caller's request")
				}
			})
		}
	}
}

func TestResignerPayloads(t *testing.T) {
	srv, seen := newVerifyingBackend(t)
	rt := NewResigner(srv.Client().Transport, backendCredentials(), backendRegion)
	const payload = "some object bytes"
	cases := []struct {
		name   string
		header string
		body   io.Reader
		length int64
		mode   PayloadMode
		want   string
	}{
		{name: "no body signs the empty hash", body: nil, length: 0, mode: PayloadSHA256},
		{name: "body without hash is unsigned", body: strings.NewReader(payload), length: int64(len(payload)), mode: PayloadUnsigned, want: payload},
		{name: "hex hash given is signed and checked", header: sha256Hex([]byte(payload)), body: strings.NewReader(payload), length: int64(len(payload)), mode: PayloadSHA256, want: payload},
		{name: "UNSIGNED-PAYLOAD given", header: unsignedPayload, body: strings.NewReader(payload), length: int64(len(payload)), mode: PayloadUnsigned, want: payload},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := outboundRequest(t, srv.URL, "PUT", "obj", "", tc.body, tc.length)
			if tc.header != "" {
				r.Header.Set(headerContentSHA256, tc.header)
			}
			resp, err := rt.RoundTrip(r)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			s := <-seen
			if s.err != nil {
				t.Fatalf("backend rejected: %v", s.err)
			}
			if s.auth.Mode != tc.mode || s.bodyErr != nil || string(s.body) != tc.want {
				t.Fatalf("backend got mode %v body %q (%v)", s.auth.Mode, s.body, s.bodyErr)
			}
		})
	}
}

// neverReadBody fails the test if anyone reads it: the resigner must stream.
type neverReadBody struct{ t *testing.T }

func (b neverReadBody) Read([]byte) (int, error) {
	b.t.Error("the resigner read the body")
	return 0, io.EOF
}
func (neverReadBody) Close() error { return nil }

// capturingTransport stands for the HTTP transport to the backend; it keeps
// the request it was given instead of sending it.
type capturingTransport struct{ got *http.Request }

func (c *capturingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.got = r
	return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
}

func TestResignerDoesNotReadOrMutate(t *testing.T) {
	next := &capturingTransport{}
	rt := NewResigner(next, backendCredentials(), backendRegion)
	r := outboundRequest(t, "http://backend.internal:9000", "PUT", "k", "x=1", neverReadBody{t}, 10)
	before := r.Header.Clone()
	resp, err := rt.RoundTrip(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if next.got == r {
		t.Fatal("the caller's request was passed on instead of a clone")
	}
	if len(r.Header) != len(before) || r.Header.Get("X-Amz-Date") != "" {
		t.Fatalf("caller's header changed: %v", r.Header)
	}
	got := next.got
	if !strings.HasPrefix(got.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential="+backendAccessKey+"/") {
		t.Fatalf("outbound Authorization %q", got.Header.Get("Authorization"))
	}
	if got.Header.Get(headerContentSHA256) != unsignedPayload || got.Body != r.Body {
		t.Fatalf("outbound payload hash %q, body replaced: %v", got.Header.Get(headerContentSHA256), got.Body != r.Body)
	}
}

// failingCredentials stands for a credentials source that is unreachable.
type failingCredentials struct{}

func (failingCredentials) Retrieve(context.Context) (aws.Credentials, error) {
	return aws.Credentials{}, errors.New("no credentials here")
}

type closeRecorder struct {
	io.Reader
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }

func TestResignerCredentialFailure(t *testing.T) {
	next := &capturingTransport{}
	rt := NewResigner(next, failingCredentials{}, backendRegion)
	body := &closeRecorder{Reader: bytes.NewReader([]byte("x"))}
	r := outboundRequest(t, "http://backend.internal", "PUT", "k", "", body, 1)
	if _, err := rt.RoundTrip(r); err == nil || !strings.Contains(err.Error(), "no credentials here") {
		t.Fatalf("RoundTrip error %v", err)
	}
	if next.got != nil {
		t.Fatal("an unsigned request reached the backend")
	}
	if !body.closed {
		t.Fatal("body not closed on error, as RoundTripper must")
	}
}

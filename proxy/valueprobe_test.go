package proxy

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/internal/testkit"
	"github.com/s3cond/s3cond/sigv4"
)

// acceptingStore stands for an S3 store that accepts every request: it
// keeps what it received (after s3cond's re-signing) and answers 200 with
// an empty body. The value tests look only at what reached it.
type acceptingStore struct {
	mu       sync.Mutex
	received []*http.Request
	// bodies holds each received request's body, by request.
	bodies map[*http.Request][]byte
}

func (s *acceptingStore) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		_ = r.Body.Close()
	}
	s.mu.Lock()
	if s.bodies == nil {
		s.bodies = map[*http.Request][]byte{}
	}
	s.bodies[r] = body
	s.received = append(s.received, r)
	s.mu.Unlock()
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Length": {"0"}},
		Body: http.NoBody, ContentLength: 0, Request: r, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
}

// take returns and forgets what the store received, except s3cond's own
// HeadBucket on the error path (bucketfirst.go), which carries no client
// value but the bucket.
func (s *acceptingStore) take() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var got []*http.Request
	for _, r := range s.received {
		if r.Method == http.MethodHead && r.URL.RawQuery == "" && strings.Count(strings.TrimPrefix(r.URL.Path, "/"), "/") == 0 {
			continue
		}
		got = append(got, r)
	}
	s.received = nil
	return got
}

// bodyOf is what the store read as r's body.
func (s *acceptingStore) bodyOf(r *http.Request) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bodies[r]
}

// valueProbe is s3cond in front of a acceptingStore, called in process
// (no sockets: the property tests send thousands of requests).
type valueProbe struct {
	proxy *Proxy
	store *acceptingStore
	kp    KeyPolicy
}

func newValueProbe(t testing.TB, kp KeyPolicy) *valueProbe {
	t.Helper()
	store := &acceptingStore{}
	u, _ := url.Parse("http://store.invalid:9000")
	backend := &Backend{
		Name: "default", Endpoint: u, KeyPolicy: kp,
		Client: &http.Client{Transport: sigv4.NewResigner(store,
			credentials.NewStaticCredentialsProvider(backendKeyID, "backend-secret", ""), "us-east-1")},
	}
	p := New(Options{Auth: sigv4.NewVerifier(staticKeys{}, "us-east-1"), Access: staticKeys{}, Backend: backend, Log: zerolog.Nop()})
	return &valueProbe{proxy: p, store: store, kp: kp}
}

// do sends a request signed with keyID for target ("/bucket/key?query",
// escaped as it goes on the wire) and returns the answer's status and body.
func (v *valueProbe) do(t testing.TB, keyID, method, target string, header http.Header, body []byte) (int, string) {
	t.Helper()
	req := httptest.NewRequest(method, "http://s3cond.test"+target, bytes.NewReader(body))
	for name, values := range header {
		req.Header[name] = values
	}
	sum := payloadHashOf(body)
	creds := aws.Credentials{AccessKeyID: keyID, SecretAccessKey: testSecret}
	testkit.Sign(t, req, creds, sum)
	rec := httptest.NewRecorder()
	v.proxy.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

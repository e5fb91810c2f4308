package proxy

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
)

// heldForm starts an anonymous POST Object form from 192.0.2.1 (httptest's
// client address) whose fields never finish, holding an unauthenticated
// slot until the test ends.
func heldForm(t *testing.T, p *Proxy) {
	t.Helper()
	r, client, w := formOverPipe()
	served := make(chan struct{})
	go func() { p.ServeHTTP(w, r); close(served) }()
	go func() { _, _ = client.Write([]byte("--XyZ\r\nContent-Disposition: form-data; name=\"key\"\r\n")) }()
	t.Cleanup(func() { _ = client.Close(); <-served })
	synctest.Wait() // the form is being read, holding its slot
}

// A request that claims a signature is verified under its own budget: with
// every unauthenticated slot held by anonymous forms it is still answered
// on its merits, not 503 (issue 32, finding 1: signed requests got 503
// SlowDown behind 256 trickling forms).
func TestSignedRequestsDoNotQueueBehindUnauthenticatedWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := formProxy(Options{MaxUnauthenticated: 1})
		heldForm(t, p)

		signed := httptest.NewRequest(http.MethodGet, "http://s3cond/"+bucketName+"/k", nil)
		signed.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIAUNKNOWN/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=00")
		w := httptest.NewRecorder()
		p.ServeHTTP(w, signed)
		if w.Code == http.StatusServiceUnavailable {
			t.Fatalf("a signed request waited on unauthenticated work: %d %s", w.Code, w.Body)
		}
		if w.Code != http.StatusForbidden || w.Header().Get("Connection") != "close" {
			t.Fatalf("a request failing its signature: %d Connection=%q, want 403 and the connection closed",
				w.Code, w.Header().Get("Connection"))
		}

		anonymous := httptest.NewRecorder()
		other := httptest.NewRequest(http.MethodGet, "http://s3cond/"+bucketName+"/k", nil)
		other.RemoteAddr = "198.51.100.7:4000"
		p.ServeHTTP(anonymous, other)
		wantS3Code(t, anonymous, http.StatusServiceUnavailable, "SlowDown")
		if anonymous.Header().Get("Connection") != "close" {
			t.Fatal("an unauthenticated 503 left the connection open")
		}
	})
}

// One address has only its share of unauthenticated work in flight;
// another address still gets an answer on its merits, and a refusal of a
// request that never authenticated closes its connection.
func TestUnauthenticatedWorkIsCappedPerSource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := formProxy(Options{MaxUnauthenticated: 8, MaxUnauthenticatedPerSource: 1})
		heldForm(t, p)

		same := httptest.NewRecorder()
		p.ServeHTTP(same, httptest.NewRequest(http.MethodGet, "http://s3cond/"+bucketName+"/k", nil))
		wantS3Code(t, same, http.StatusServiceUnavailable, "SlowDown")

		other := httptest.NewRequest(http.MethodGet, "http://s3cond/"+bucketName+"/k", nil)
		other.RemoteAddr = "198.51.100.7:4000"
		w := httptest.NewRecorder()
		p.ServeHTTP(w, other)
		wantS3Code(t, w, http.StatusForbidden, "AccessDenied") // anonymous, not granted
		if w.Header().Get("Connection") != "close" {
			t.Fatal("an unauthenticated 403 left the connection open")
		}
	})
}

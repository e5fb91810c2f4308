package proxy

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/testkit"
	"github.com/s3cond/s3cond/s3err"
	"github.com/s3cond/s3cond/sigv4"
)

// badlySignedPut sends a PUT signed with the test key whose signature was
// then altered, as a page does with a presigned URL that was tampered with
// or has gone stale, with the page's Origin.
func badlySignedPut(t *testing.T, target, origin string) *http.Response {
	t.Helper()
	body := []byte("page upload")
	req, _ := http.NewRequest(http.MethodPut, target, bytes.NewReader(body))
	creds := aws.Credentials{AccessKeyID: testKeyID, SecretAccessKey: testSecret}
	testkit.Sign(t, req, creds, "UNSIGNED-PAYLOAD")
	auth := req.Header.Get("Authorization")
	req.Header.Set("Authorization", auth[:len(auth)-4]+"0000")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// corsStore answers an OPTIONS as a store with a CORS rule for
// https://app.example and PUT does; anything else with 500, which no test
// here should cause.
func corsStore(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodOptions {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	if r.Header.Get("Origin") != "https://app.example" || r.Header.Get("Access-Control-Request-Method") != http.MethodPut {
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte("<Error><Code>AccessForbidden</Code><Message>CORSResponse: This CORS request is not allowed.</Message></Error>"))
		return
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "https://app.example")
	h.Set("Access-Control-Allow-Methods", "PUT")
	h.Set("Access-Control-Expose-Headers", "ETag")
	h.Set("Vary", "Origin, Access-Control-Request-Headers, Access-Control-Request-Method")
	h.Set("Set-Cookie", "store-session=1")
	h.Set("X-Store-Internal", "node-7")
}

// TestErrorAnswerCarriesTheBucketsCORSHeaders: s3cond's own 403 to a
// cross-origin request gets the headers the bucket's CORS rule gives, so a
// page can read it; the store is asked with a bare OPTIONS on the bucket
// carrying only Origin and the request's method.
func TestErrorAnswerCarriesTheBucketsCORSHeaders(t *testing.T) {
	store := &recordingStore{}
	proxyURL, _ := scriptedProxy(t, nil, store.handler(corsStore))
	resp := badlySignedPut(t, proxyURL+"/"+bucketName+"/avatars/user-1.png?x-id=PutObject", "https://app.example")

	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("status %d, want 403", resp.StatusCode)
	}
	for name, want := range map[string]string{
		"Access-Control-Allow-Origin":   "https://app.example",
		"Access-Control-Expose-Headers": "ETag",
		"Vary":                          "Origin, Access-Control-Request-Headers, Access-Control-Request-Method",
	} {
		if got := resp.Header.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	for _, name := range []string{"Access-Control-Allow-Methods", "Set-Cookie", "X-Store-Internal"} {
		if got := resp.Header.Get(name); got != "" {
			t.Errorf("%s = %q reached the client", name, got)
		}
	}
	seen := store.requests()
	if len(seen) != 1 {
		t.Fatalf("store saw %d requests, want one lookup", len(seen))
	}
	got := seen[0]
	if got.method != http.MethodOptions || got.path != "/"+bucketName || got.rawQuery != "" || got.body != "" {
		t.Fatalf("lookup %s %s?%s body %q, want a bare OPTIONS on the bucket", got.method, got.path, got.rawQuery, got.body)
	}
	if got.header.Get("Access-Control-Request-Method") != http.MethodPut || got.header.Get("Access-Control-Request-Headers") != "" {
		t.Errorf("lookup header %v", got.header)
	}
	if !strings.Contains(got.header.Get("Authorization"), backendKeyID) {
		t.Errorf("lookup not signed with the store's key: %q", got.header.Get("Authorization"))
	}
	for name := range got.header {
		switch name {
		case "Origin", "Access-Control-Request-Method", "Authorization", "X-Amz-Date", "X-Amz-Content-Sha256",
			"User-Agent", "Accept-Encoding", "Content-Length":
		default:
			t.Errorf("the lookup carried %s", name)
		}
	}
}

// TestErrorAnswerWithoutCORS: no lookup without an Origin; no CORS headers
// when the bucket's rules do not allow the origin (the store's 403).
func TestErrorAnswerWithoutCORS(t *testing.T) {
	store := &recordingStore{}
	proxyURL, _ := scriptedProxy(t, nil, store.handler(corsStore))
	target := proxyURL + "/" + bucketName + "/k"

	resp := badlySignedPut(t, target, "")
	if resp.StatusCode != http.StatusForbidden || len(store.requests()) != 0 {
		t.Fatalf("no Origin: status %d, store saw %d requests", resp.StatusCode, len(store.requests()))
	}
	resp = badlySignedPut(t, target, "https://elsewhere.example")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("origin without a rule: status %d, Access-Control-Allow-Origin %q",
			resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
	}
	if len(store.requests()) != 1 {
		t.Fatalf("store saw %d requests, want the one lookup", len(store.requests()))
	}
}

// TestErrorAnswerDoesNotWaitLongForCORS: a store that does not answer the
// lookup delays the error by corsLookupTimeout at most, and the error comes
// without CORS headers.
func TestErrorAnswerDoesNotWaitLongForCORS(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	asked := make(chan string, 1)
	proxyURL, _ := scriptedProxy(t, nil, func(w http.ResponseWriter, r *http.Request) {
		select {
		case asked <- r.Method:
		default:
		}
		select { // hangs until s3cond gives up on it (or the test ends)
		case <-r.Context().Done():
		case <-release:
		}
	})
	start := time.Now()
	resp := badlySignedPut(t, proxyURL+"/"+bucketName+"/k", "https://app.example")
	elapsed := time.Since(start)
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("status %d, Access-Control-Allow-Origin %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
	}
	select {
	case method := <-asked:
		if method != http.MethodOptions {
			t.Fatalf("the store was asked a %s, want the OPTIONS lookup", method)
		}
	default:
		t.Fatal("the store was never asked: no lookup to time out")
	}
	if elapsed < corsLookupTimeout || elapsed > corsLookupTimeout+2*time.Second {
		t.Fatalf("the error took %v, want about %v: the lookup's bound", elapsed, corsLookupTimeout)
	}
}

// postFromPage posts a one-field-plus-file form with the page's Origin, as
// a page's fetch() with a FormData body sends it.
func postFromPage(t *testing.T, target string, fields []field, origin string) *http.Response {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for _, f := range fields {
		if err := w.WriteField(f.name, f.value); err != nil {
			t.Fatal(err)
		}
	}
	fw, err := w.CreateFormFile("file", "photo.jpg")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = fw.Write([]byte("jpeg bytes"))
	_ = w.Close()
	req, _ := http.NewRequest(http.MethodPost, target, &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Origin", origin)
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp
}

// TestPostObjectAnswersCarryTheBucketsCORSHeaders: a form posted by a
// page's fetch() reaches the store as a PutObject without the page's
// Origin, so s3cond looks the CORS headers up for the POST: on the 204 of
// a stored upload, on its own refusal of the form, and on the store's
// refusal of the PutObject. The lookup names POST, and the PutObject
// carries no Origin.
func TestPostObjectAnswersCarryTheBucketsCORSHeaders(t *testing.T) {
	store := &recordingStore{}
	var storeRefuses atomic.Bool
	proxyURL, _ := scriptedProxy(t, nil, store.handler(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") == http.MethodPost &&
			r.Header.Get("Origin") == "https://app.example":
			w.Header().Set("Access-Control-Allow-Origin", "https://app.example")
			w.Header().Set("Vary", "Origin, Access-Control-Request-Headers, Access-Control-Request-Method")
		case r.Method == http.MethodOptions:
			w.WriteHeader(http.StatusForbidden)
		case storeRefuses.Load():
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte("<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>"))
		default:
			w.Header().Set("ETag", `"e"`)
		}
	}))
	target := proxyURL + "/" + bucketName
	good := append(uploadPolicy().fields(t), field{"key", "uploads/photo.jpg"})

	resp := postFromPage(t, target, good, "https://app.example")
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example" {
		t.Fatalf("stored upload: %s, Access-Control-Allow-Origin %q", resp.Status, resp.Header.Get("Access-Control-Allow-Origin"))
	}
	for _, seen := range store.requests() {
		if seen.method == http.MethodPut && seen.header.Get("Origin") != "" {
			t.Errorf("the PutObject carried Origin %q", seen.header.Get("Origin"))
		}
	}
	refused := append(uploadPolicy().fields(t), field{"key", "elsewhere/photo.jpg"})
	if resp := postFromPage(t, target, refused, "https://app.example"); resp.StatusCode != http.StatusForbidden ||
		resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example" {
		t.Errorf("form refused by its policy: %s, Access-Control-Allow-Origin %q", resp.Status, resp.Header.Get("Access-Control-Allow-Origin"))
	}
	storeRefuses.Store(true)
	if resp := postFromPage(t, target, good, "https://app.example"); resp.StatusCode != http.StatusForbidden ||
		resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example" {
		t.Errorf("PutObject refused by the store: %s, Access-Control-Allow-Origin %q", resp.Status, resp.Header.Get("Access-Control-Allow-Origin"))
	}
	if resp := postFromPage(t, target, good, "https://elsewhere.example"); resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("origin without a rule: Access-Control-Allow-Origin %q", resp.Header.Get("Access-Control-Allow-Origin"))
	}
}

// TestNoCORSLookupUnderALease: the error answer of a write under its lease
// (a detached call) is not held up by any lookup (CORS or the bucket
// check), since the lease is released only after it; nor is a 5xx, when
// the store is likely unreachable.
func TestNoCORSLookupUnderALease(t *testing.T) {
	store := &recordingStore{}
	storeServer := httptest.NewServer(store.handler(corsStore))
	t.Cleanup(storeServer.Close)
	u, _ := url.Parse(storeServer.URL)
	p := New(Options{Auth: sigv4.NewVerifier(staticKeys{}, "us-east-1"), Access: staticKeys{},
		Backend: &Backend{Name: "default", Endpoint: u, Client: storeServer.Client()}, Log: zerolog.Nop()})
	newCall := func() *call {
		r := httptest.NewRequest(http.MethodPut, "/"+bucketName+"/k", nil)
		r.Header.Set("Origin", "https://app.example")
		return &call{w: httptest.NewRecorder(), r: r, id: "REQ", target: operation.Target{Bucket: bucketName, Key: "k", RawKey: "k"},
			backend: p.backend, info: &requestInfo{}}
	}

	underLease := newCall()
	underLease.auth = &sigv4.Request{AccessKeyID: testKeyID, Body: new(sigv4.Body)}
	underLease.op = operation.PutObject
	p.fail(underLease.detached(), s3err.New(s3err.BadDigest))
	p.addErrorCORS(newCall(), s3err.New(s3err.ServiceUnavailable))
	if n := len(store.requests()); n != 0 {
		t.Fatalf("store saw %d lookups, want none", n)
	}
	c := newCall() // the control: an ordinary call gets its lookup
	p.addErrorCORS(c, s3err.New(s3err.BadDigest))
	if n := len(store.requests()); n != 1 || c.w.Header().Get("Access-Control-Allow-Origin") != "https://app.example" {
		t.Fatalf("ordinary call: %d lookups, Access-Control-Allow-Origin %q", n, c.w.Header().Get("Access-Control-Allow-Origin"))
	}
}

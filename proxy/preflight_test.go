package proxy

import (
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/s3cond/s3cond/internal/testkit"
	"github.com/s3cond/s3cond/s3err"
	"github.com/s3cond/s3cond/sigv4"
)

// seenRequest is what the scripted store received.
type seenRequest struct {
	method, path, rawQuery string
	header                 http.Header
	body                   string
}

// recordingStore stands for an S3 store with a CORS configuration on its
// bucket: it records every request s3cond sends it and answers with
// answer.
type recordingStore struct {
	mu   sync.Mutex
	seen []seenRequest
}

func (s *recordingStore) handler(answer http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.seen = append(s.seen, seenRequest{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Clone(), string(body)})
		s.mu.Unlock()
		answer(w, r)
	}
}

func (s *recordingStore) requests() []seenRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seenRequest(nil), s.seen...)
}

// preflightDo sends an unsigned request, as a browser sends a preflight.
func preflightDo(t *testing.T, method, url string, header http.Header, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body == "" {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	for name, values := range header {
		req.Header[name] = values
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// browserPreflight is what a browser sends before a presigned PUT with
// If-None-Match and Content-Type.
func browserPreflight() http.Header {
	return http.Header{
		"Origin":                         {"https://app.example"},
		"Access-Control-Request-Method":  {"PUT"},
		"Access-Control-Request-Headers": {"content-type,if-none-match"},
	}
}

// TestPreflightReachesStoreAsBareOptions: the store receives an OPTIONS on
// the object's path with no query, no body and, of everything the client
// sent, only the three preflight headers; the client gets the store's CORS
// headers and nothing else of its answer.
func TestPreflightReachesStoreAsBareOptions(t *testing.T) {
	store := &recordingStore{}
	proxyURL, _ := scriptedProxy(t, nil, store.handler(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "https://app.example")
		h.Set("Access-Control-Allow-Methods", "PUT")
		h.Set("Access-Control-Allow-Headers", "content-type, if-none-match")
		h.Set("Vary", "Origin, Access-Control-Request-Headers, Access-Control-Request-Method")
		h.Set("Set-Cookie", "store-session=1")
		h.Set("X-Store-Internal", "node-7")
		h.Set("X-Amz-Request-Id", "BACKENDREQ1")
		_, _ = io.WriteString(w, "store body")
	}))
	header := browserPreflight()
	// What a hostile page or client could add: none of it may reach the store.
	header["Authorization"] = []string{"AWS4-HMAC-SHA256 Credential=" + testKeyID + "/x"}
	header["Cookie"] = []string{"session=secret"}
	header["X-Amz-Copy-Source"] = []string{"/other-bucket/secret"}
	header["X-Amz-Meta-Note"] = []string{"hi"}
	header["If-None-Match"] = []string{"*"}
	url := proxyURL + "/" + bucketName + "/avatars/user%201.png?X-Amz-Algorithm=AWS4-HMAC-SHA256" +
		"&X-Amz-Signature=abc&X-Amz-SignedHeaders=host&x-id=PutObject&partNumber=1&uploadId=u"
	resp, body := preflightDo(t, http.MethodOptions, url, header, "")

	if resp.StatusCode != http.StatusOK || body != "" {
		t.Fatalf("preflight answered %s %q, want 200 with no body", resp.Status, body)
	}
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "https://app.example" {
		t.Errorf("Access-Control-Allow-Origin = %q", got)
	}
	if resp.Header.Get("Access-Control-Allow-Headers") == "" || resp.Header.Get("Vary") == "" {
		t.Errorf("CORS headers lost: %v", resp.Header)
	}
	for _, leaked := range []string{"Set-Cookie", "X-Store-Internal"} {
		if v := resp.Header.Get(leaked); v != "" {
			t.Errorf("the store's %s reached the client: %q", leaked, v)
		}
	}
	if id := resp.Header.Get("X-Amz-Request-Id"); id == "" || id == "BACKENDREQ1" {
		t.Errorf("x-amz-request-id = %q, want s3cond's own", id)
	}

	seen := store.requests()
	if len(seen) != 1 {
		t.Fatalf("the store got %d requests, want 1", len(seen))
	}
	got := seen[0]
	if got.method != http.MethodOptions || got.path != "/"+bucketName+"/avatars/user%201.png" || got.rawQuery != "" || got.body != "" {
		t.Errorf("the store got %s %s?%s with body %q, want a bare OPTIONS on the object", got.method, got.path, got.rawQuery, got.body)
	}
	for _, name := range preflightRequestHeaders {
		if want := header.Get(name); got.header.Get(name) != want {
			t.Errorf("%s reached the store as %q, want %q", name, got.header.Get(name), want)
		}
	}
	// Besides the three, only the re-signer's headers and Go's transport's.
	allowed := newHeaderSet("Origin", "Access-Control-Request-Method", "Access-Control-Request-Headers",
		"Authorization", "X-Amz-Date", "X-Amz-Content-Sha256", "User-Agent", "Accept-Encoding")
	var extra []string
	for name := range got.header {
		if !allowed[name] {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("the store got headers the client sent beyond the preflight's: %v", extra)
	}
	if auth := got.header.Get("Authorization"); !strings.Contains(auth, backendKeyID) {
		t.Errorf("the preflight was not re-signed with the store's key: %q", auth)
	}
	if h := got.header.Get("X-Amz-Content-Sha256"); h != sigv4.EmptyPayloadHash {
		t.Errorf("payload hash %q, want the empty body's", h)
	}
}

// TestPreflightRefusedBeforeTheStore: an OPTIONS that is no well-formed
// preflight, or addresses what s3cond serves to nobody, is answered by
// s3cond and never reaches the store.
func TestPreflightRefusedBeforeTheStore(t *testing.T) {
	store := &recordingStore{}
	proxyURL, _ := scriptedProxy(t, nil, store.handler(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
	}))
	without := func(name string) http.Header {
		h := browserPreflight()
		delete(h, name)
		return h
	}
	with := func(name, value string) http.Header {
		h := browserPreflight()
		h[name] = []string{value}
		return h
	}
	object := "/" + bucketName + "/k"
	cases := []struct {
		name, path, body string
		header           http.Header
		code             s3err.Code
		message          string
	}{
		{"no Origin", object, "", without("Origin"), s3err.BadRequest, "Insufficient information. Origin request header needed."},
		{"empty Origin", object, "", with("Origin", ""), s3err.BadRequest, "Insufficient information. Origin request header needed."},
		{"no request method", object, "", without("Access-Control-Request-Method"), s3err.BadRequest, "Invalid Access-Control-Request-Method: null"},
		{"lower-case method", object, "", with("Access-Control-Request-Method", "put"), s3err.BadRequest, "Invalid Access-Control-Request-Method: put"},
		{"PATCH", object, "", with("Access-Control-Request-Method", "PATCH"), s3err.BadRequest, "Invalid Access-Control-Request-Method: PATCH"},
		{"bad header name", object, "", with("Access-Control-Request-Headers", "content-type,bad header"), s3err.BadRequest,
			`Access-Control-Request-Headers "bad header" contains invalid character.`},
		{"a plain OPTIONS", object, "", http.Header{}, s3err.BadRequest, "Insufficient information. Origin request header needed."},
		{"a body", object, "<xml/>", browserPreflight(), s3err.InvalidRequest, ""},
		{"unknown parameter", object + "?session", "", browserPreflight(), s3err.NotImplemented, ""},
		{"hoisted copy source", object + "?x-amz-copy-source=%2Fsecret%2Fk", "", browserPreflight(), s3err.NotImplemented, ""},
		{"the service", "/", "", browserPreflight(), s3err.NotImplemented, ""},
		{"reserved bucket", "/minio/admin/v3/info", "", browserPreflight(), s3err.InvalidBucketName, ""},
		{"key policy", "/" + bucketName + "/a/../b", "", browserPreflight(), s3err.InvalidArgument, ""},
	}
	for _, c := range cases {
		resp, body := preflightDo(t, http.MethodOptions, proxyURL+c.path, c.header, c.body)
		if !strings.Contains(body, "<Code>"+string(c.code)+"</Code>") || resp.StatusCode != s3err.New(c.code).Status() {
			t.Errorf("%s: %s %s, want %s", c.name, resp.Status, body, c.code)
		}
		if c.message != "" && !strings.Contains(body, "<Message>"+xmlEscaped(c.message)+"</Message>") {
			t.Errorf("%s: %s, want the message %q", c.name, body, c.message)
		}
		if resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s: answered with CORS headers", c.name)
		}
	}
	if seen := store.requests(); len(seen) != 0 {
		t.Fatalf("refused preflights reached the store: %+v", seen)
	}
}

func xmlEscaped(s string) string {
	return strings.NewReplacer(`"`, "&#34;", "'", "&#39;").Replace(s)
}

// TestPreflightRelaysStoreRefusal: when no CORS rule matches, the store's
// 403 reaches the client as S3's document, with s3cond's request ID and
// the client's bucket name, and without the store's other headers.
func TestPreflightRelaysStoreRefusal(t *testing.T) {
	buckets := map[string]string{bucketName: "backend-archive"}
	proxyURL, backendHost := scriptedProxy(t, buckets, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/backend-archive" {
			t.Errorf("the store got %s, want the mapped bucket", r.URL.Path)
		}
		w.Header().Set("Content-Type", "application/xml")
		w.Header().Set("Set-Cookie", "store-session=1")
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>CORSResponse</Code>`+
			`<Message>CORS is not enabled for this bucket.</Message><Resource>/backend-archive</Resource>`+
			`<RequestId>BACKENDREQ1</RequestId><HostId>BACKENDHOST1</HostId></Error>`)
	})
	resp, body := preflightDo(t, http.MethodOptions, proxyURL+"/"+bucketName, browserPreflight(), "")
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "<Code>CORSResponse</Code>") {
		t.Fatalf("got %s %s, want the store's 403 CORSResponse", resp.Status, body)
	}
	wantNoBackendDetails(t, body, backendHost)
	wantRequestID(t, resp.Header, body)
	if resp.Header.Get("Set-Cookie") != "" {
		t.Error("the store's Set-Cookie reached the client")
	}
}

// TestSignedRequestKeepsCORSHeaders: the actual request after a preflight
// carries Origin; S3 answers it with Access-Control-Allow-Origin from the
// bucket's rules, which the browser needs to hand the answer to the page.
func TestSignedRequestKeepsCORSHeaders(t *testing.T) {
	var origin string
	proxyURL, _ := scriptedProxy(t, nil, func(w http.ResponseWriter, r *http.Request) {
		origin = r.Header.Get("Origin")
		w.Header().Set("Access-Control-Allow-Origin", "https://app.example")
		w.Header().Set("Access-Control-Expose-Headers", "ETag")
		w.Header().Set("ETag", `"abc"`)
	})
	req, _ := http.NewRequest(http.MethodGet, proxyURL+"/"+bucketName+"/k", nil)
	req.Header.Set("Origin", "https://app.example")
	creds := aws.Credentials{AccessKeyID: testKeyID, SecretAccessKey: testSecret}
	testkit.Sign(t, req, creds, sigv4.EmptyPayloadHash)
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || origin != "https://app.example" {
		t.Fatalf("got %s, the store saw Origin %q", resp.Status, origin)
	}
	if resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example" || resp.Header.Get("Access-Control-Expose-Headers") != "ETag" {
		t.Errorf("CORS headers of the actual response lost: %v", resp.Header)
	}
}

package proxy

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease/leasetest"
	"github.com/s3cond/s3cond/internal/backendhttp"
	"github.com/s3cond/s3cond/sigv4"
)

// postPolicy is a browser-upload policy for the test key, signed the way a
// web application's backend signs it (SigV4 signing key, HMAC over the
// base64 policy).
type postPolicy struct {
	expiration time.Time
	conditions []any
	keyID      string
}

// field is one form field, in form order.
type field struct{ name, value string }

// fields returns the signed authentication fields plus the policy's own
// conditions made into the credential, date and algorithm fields.
func (pp postPolicy) fields(t *testing.T) []field {
	t.Helper()
	now := time.Now().UTC()
	if pp.keyID == "" {
		pp.keyID = testKeyID
	}
	credential := pp.keyID + "/" + now.Format("20060102") + "/us-east-1/s3/aws4_request"
	amzDate := now.Format("20060102T150405Z")
	conditions := append([]any{
		map[string]string{"x-amz-algorithm": "AWS4-HMAC-SHA256"},
		map[string]string{"x-amz-credential": credential},
		map[string]string{"x-amz-date": amzDate},
	}, pp.conditions...)
	doc, err := json.Marshal(map[string]any{"expiration": pp.expiration.UTC().Format(time.RFC3339), "conditions": conditions})
	if err != nil {
		t.Fatal(err)
	}
	policy := base64.StdEncoding.EncodeToString(doc)
	mac := func(key []byte, data string) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(data))
		return h.Sum(nil)
	}
	k := mac([]byte("AWS4"+testSecret), now.Format("20060102"))
	for _, part := range []string{"us-east-1", "s3", "aws4_request"} {
		k = mac(k, part)
	}
	return []field{
		{"x-amz-algorithm", "AWS4-HMAC-SHA256"}, {"x-amz-credential", credential}, {"x-amz-date", amzDate},
		{"policy", policy}, {"x-amz-signature", hex.EncodeToString(mac(k, policy))},
	}
}

// sendPostForm posts a multipart form as a browser does: the fields, then the
// file named fileName, then the closing boundary. The file is streamed.
func sendPostForm(t *testing.T, endpoint, bucket string, fields []field, fileName string, file io.Reader, fileSize int64) *http.Response {
	t.Helper()
	var head bytes.Buffer
	w := multipart.NewWriter(&head)
	for _, f := range fields {
		if err := w.WriteField(f.name, f.value); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.CreateFormFile("file", fileName); err != nil {
		t.Fatal(err)
	}
	tail := "\r\n--" + w.Boundary() + "--\r\n"
	body := io.MultiReader(&head, file, strings.NewReader(tail))
	req, err := http.NewRequest(http.MethodPost, endpoint+"/"+bucket, body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(head.Len()) + fileSize + int64(len(tail))
	req.Header.Set("Content-Type", w.FormDataContentType())
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func expectS3Error(t *testing.T, resp *http.Response, status int, code string) {
	t.Helper()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status || !strings.Contains(string(body), "<Code>"+code+"</Code>") {
		t.Fatalf("status %d, body %s; want %d %s", resp.StatusCode, body, status, code)
	}
}

func (f *fixture) expectMissing(t *testing.T, key string) {
	t.Helper()
	if _, err := f.client.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(bucketName), Key: aws.String(key)}); err == nil {
		t.Fatalf("%s was stored", key)
	}
}

func uploadPolicy(more ...any) postPolicy {
	return postPolicy{expiration: time.Now().Add(time.Hour), conditions: append([]any{
		map[string]string{"bucket": bucketName}, []any{"starts-with", "$key", "uploads/"},
	}, more...)}
}

func TestPostObjectStoresTheFileWithItsMetadata(t *testing.T) {
	f := newFixture(t, false)
	pp := uploadPolicy(
		[]any{"starts-with", "$Content-Type", "text/"}, map[string]string{"x-amz-meta-owner": "ann"},
		[]any{"content-length-range", 1, 1024})
	fields := append(pp.fields(t), field{"key", "uploads/${filename}"}, field{"Content-Type", "text/plain"},
		field{"x-amz-meta-owner", "ann"})
	resp := sendPostForm(t, f.proxyURL, bucketName, fields, "notes.txt", strings.NewReader("form upload"), 11)
	if resp.StatusCode != http.StatusNoContent {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if resp.Header.Get("ETag") == "" || !strings.HasSuffix(resp.Header.Get("Location"), "/"+bucketName+"/uploads%2Fnotes.txt") {
		t.Errorf("ETag %q, Location %q", resp.Header.Get("ETag"), resp.Header.Get("Location"))
	}
	out, err := f.client.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(bucketName), Key: aws.String("uploads/notes.txt")})
	if err != nil {
		t.Fatalf("GET the upload: %v", err)
	}
	defer out.Body.Close()
	body, _ := io.ReadAll(out.Body)
	if string(body) != "form upload" || out.Metadata["owner"] != "ann" || aws.ToString(out.ContentType) != "text/plain" {
		t.Errorf("stored %q, metadata %v, content type %q", body, out.Metadata, aws.ToString(out.ContentType))
	}
}

func TestPostObjectSuccessAnswers(t *testing.T) {
	f := newFixture(t, false)
	t.Run("201 PostResponse", func(t *testing.T) {
		pp := uploadPolicy(map[string]string{"success_action_status": "201"})
		fields := append(pp.fields(t), field{"key", "uploads/created"}, field{"success_action_status", "201"})
		resp := sendPostForm(t, f.proxyURL, bucketName, fields, "f", strings.NewReader("x"), 1)
		var doc struct{ Location, Bucket, Key, ETag string }
		if err := xml.NewDecoder(resp.Body).Decode(&doc); err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("status %d, decode: %v", resp.StatusCode, err)
		}
		if doc.Bucket != bucketName || doc.Key != "uploads/created" || doc.ETag == "" || !strings.HasSuffix(doc.Location, "/uploads%2Fcreated") {
			t.Errorf("PostResponse %+v", doc)
		}
	})
	t.Run("303 redirect", func(t *testing.T) {
		pp := uploadPolicy([]any{"starts-with", "$success_action_redirect", "https://app.example/"})
		fields := append(pp.fields(t), field{"key", "uploads/redirected"}, field{"success_action_redirect", "https://app.example/done?x=1"})
		resp := sendPostForm(t, f.proxyURL, bucketName, fields, "f", strings.NewReader("x"), 1)
		loc, err := url.Parse(resp.Header.Get("Location"))
		if resp.StatusCode != http.StatusSeeOther || err != nil {
			t.Fatalf("status %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
		}
		q := loc.Query()
		if loc.Host != "app.example" || q.Get("x") != "1" || q.Get("bucket") != bucketName || q.Get("key") != "uploads/redirected" || !strings.HasPrefix(q.Get("etag"), `"`) {
			t.Errorf("Location %s", loc)
		}
	})
}

func TestPostObjectRefusals(t *testing.T) {
	f := newFixture(t, false)
	cases := []struct {
		name   string
		fields func() []field
		status int
		code   string
	}{
		{"expired", func() []field {
			pp := uploadPolicy()
			pp.expiration = time.Now().Add(-time.Minute)
			return append(pp.fields(t), field{"key", "uploads/refused"})
		}, 403, "AccessDenied"},
		{"wrong signature", func() []field {
			fs := append(uploadPolicy().fields(t), field{"key", "uploads/refused"})
			fs[4].value = strings.Repeat("0", 64)
			return fs
		}, 403, "SignatureDoesNotMatch"},
		{"key outside starts-with", func() []field {
			return append(uploadPolicy().fields(t), field{"key", "elsewhere/refused"})
		}, 403, "AccessDenied"},
		{"too large for content-length-range", func() []field {
			return append(uploadPolicy([]any{"content-length-range", 0, 4}).fields(t), field{"key", "uploads/refused"})
		}, 400, "EntityTooLarge"},
		{"unpoliced field", func() []field {
			return append(uploadPolicy().fields(t), field{"key", "uploads/refused"}, field{"x-amz-meta-sneaky", "1"})
		}, 403, "AccessDenied"},
		{"no key", func() []field { return uploadPolicy().fields(t) }, 400, "InvalidArgument"},
		{"anonymous", func() []field { return []field{{"key", "uploads/refused"}} }, 403, "AccessDenied"},
		{"read-only key", func() []field {
			pp := uploadPolicy()
			pp.keyID = readOnlyID
			return append(pp.fields(t), field{"key", "uploads/refused"})
		}, 403, "AccessDenied"},
		{"checksum of other content", func() []field {
			return append(uploadPolicy(map[string]string{"x-amz-checksum-crc32": "AAAAAA=="}).fields(t),
				field{"key", "uploads/refused"}, field{"x-amz-checksum-crc32", "AAAAAA=="})
		}, 400, "BadDigest"},
		{"Content-MD5 of other content", func() []field {
			return append(uploadPolicy(map[string]string{"Content-MD5": "1B2M2Y8AsgTpgAmY7PhCfg=="}).fields(t),
				field{"key", "uploads/refused"}, field{"Content-MD5", "1B2M2Y8AsgTpgAmY7PhCfg=="})
		}, 400, "BadDigest"},
		{"a checksum algorithm s3cond cannot verify", func() []field {
			return append(uploadPolicy(map[string]string{"x-amz-checksum-invalid": "invalid"}).fields(t),
				field{"key", "uploads/refused"}, field{"x-amz-checksum-invalid", "invalid"})
		}, 400, "InvalidRequest"},
		{"object lock, which s3cond does not implement (spec.md §7)", func() []field {
			return append(uploadPolicy(map[string]string{"x-amz-object-lock-legal-hold": "ON"}).fields(t),
				field{"key", "uploads/refused"}, field{"x-amz-object-lock-legal-hold", "ON"})
		}, 501, "NotImplemented"},
		{"a dot segment in the key", func() []field {
			return append(uploadPolicy().fields(t), field{"key", "uploads/../refused"})
		}, 400, "InvalidArgument"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := sendPostForm(t, f.proxyURL, bucketName, tc.fields(), "f", strings.NewReader("0123456789"), 10)
			expectS3Error(t, resp, tc.status, tc.code)
			f.expectMissing(t, "uploads/refused")
		})
	}
}

func TestPostObjectFileMustBeLast(t *testing.T) {
	f := newFixture(t, false)
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for _, fl := range append(uploadPolicy().fields(t), field{"key", "uploads/notlast"}) {
		_ = w.WriteField(fl.name, fl.value)
	}
	fw, _ := w.CreateFormFile("file", "f")
	_, _ = fw.Write([]byte("file bytes"))
	_ = w.WriteField("after", "the file")
	_ = w.Close()
	req, _ := http.NewRequest(http.MethodPost, f.proxyURL+"/"+bucketName, &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	expectS3Error(t, resp, 400, "MalformedPOSTRequest")
	f.expectMissing(t, "uploads/notlast")
}

func TestPostObjectNeedsFormData(t *testing.T) {
	f := newFixture(t, false)
	resp, err := http.Post(f.proxyURL+"/"+bucketName, "application/x-www-form-urlencoded", strings.NewReader("key=k"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	expectS3Error(t, resp, 412, "PreconditionFailed")
}

// discardingStore stands for an S3 store answering PutObject: it reads the
// body, keeps only its size and MD5, and answers with the MD5 as ETag.
type discardingStore struct {
	mu   sync.Mutex
	size map[string]int64
}

func (s *discardingStore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := md5.New()
	n, err := io.Copy(h, r.Body)
	if err != nil || r.Method != http.MethodPut {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.size[r.URL.Path] = n
	s.mu.Unlock()
	w.Header().Set("ETag", `"`+hex.EncodeToString(h.Sum(nil))+`"`)
}

// patternReader yields size bytes without allocating them.
type patternReader struct{ left int64 }

func (p *patternReader) Read(b []byte) (int, error) {
	if p.left == 0 {
		return 0, io.EOF
	}
	if int64(len(b)) > p.left {
		b = b[:p.left]
	}
	for i := range b {
		b[i] = byte(i)
	}
	p.left -= int64(len(b))
	return len(b), nil
}

func TestPostObjectStreamsALargeFileInFlatMemory(t *testing.T) {
	store := &discardingStore{size: map[string]int64{}}
	server := httptest.NewServer(store)
	t.Cleanup(server.Close)
	u, _ := url.Parse(server.URL)
	backend := &Backend{Name: "discard", Endpoint: u, Client: resigningClient(backendhttp.NewBackendTransport())}
	front := httptest.NewServer(New(Options{Auth: sigv4.NewVerifier(staticKeys{}, "us-east-1"), Access: staticKeys{}, Backend: backend, Log: zerolog.Nop()}))
	t.Cleanup(front.Close)

	const size = 100 << 20
	fields := append(uploadPolicy([]any{"content-length-range", 0, size}).fields(t), field{"key", "uploads/large"})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	resp := sendPostForm(t, front.URL, bucketName, fields, "large.bin", &patternReader{left: size}, size)
	runtime.ReadMemStats(&after)
	if resp.StatusCode != http.StatusNoContent {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if got := store.size["/"+bucketName+"/uploads/large"]; got != size {
		t.Fatalf("the store received %d bytes, want %d", got, size)
	}
	t.Logf("allocated %d KiB", (after.TotalAlloc-before.TotalAlloc)>>10)
	// Client, proxy and store together: a buffered file alone would be 100 MiB.
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 16<<20 {
		t.Errorf("a 100 MiB upload allocated %d MiB", allocated>>20)
	}
}

func TestPostObjectInStrictModeTakesTheLease(t *testing.T) {
	var puts atomic.Int32
	table := leasetest.New(leasetest.Hooks{})
	f := newFixtureWith(t, fixtureOptions{strict: true, leaseTable: table, backendHook: func(r *http.Request) {
		if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/uploads/strict") {
			puts.Add(1)
		}
	}})
	fields := append(uploadPolicy().fields(t), field{"key", "uploads/strict"})
	resp := sendPostForm(t, f.proxyURL, bucketName, fields, "f", strings.NewReader("strict"), 6)
	if resp.StatusCode != http.StatusNoContent || puts.Load() != 1 {
		t.Fatalf("status %d, %d backend PUTs", resp.StatusCode, puts.Load())
	}
	if got, err := f.get(t, "uploads/strict"); err != nil || got != "strict" {
		t.Fatalf("GET: %q, %v", got, err)
	}
	// The write leased the version it replaced ("*": none), as a strict-mode PutObject does.
	if rec := table.Row(t, bucketName+"/uploads/strict", "*"); rec == nil {
		t.Fatal("no lease row for the POST")
	}
}

// TestPostObjectRefusalReachesAClientStillSending: a form refused on its
// fields is answered before its file is read; a client still sending a
// large file, with Expect: 100-continue as curl sends it for one, must read
// the 403 (s3cond flushes it and drains the rest, as for a PUT refused on
// its headers), not a reset connection.
func TestPostObjectRefusalReachesAClientStillSending(t *testing.T) {
	f := newFixture(t, false)
	pp := uploadPolicy()
	pp.expiration = time.Now().Add(-time.Minute)
	var head bytes.Buffer
	w := multipart.NewWriter(&head)
	for _, fl := range append(pp.fields(t), field{"key", "uploads/refused"}) {
		_ = w.WriteField(fl.name, fl.value)
	}
	_, _ = w.CreateFormFile("file", "big.bin")
	tail := "\r\n--" + w.Boundary() + "--\r\n"
	const size = 32 << 20
	for attempt := 0; attempt < 8; attempt++ {
		body := io.MultiReader(bytes.NewReader(head.Bytes()), &patternReader{left: size}, strings.NewReader(tail))
		req, _ := http.NewRequest(http.MethodPost, f.proxyURL+"/"+bucketName, body)
		req.ContentLength = int64(head.Len()) + size + int64(len(tail))
		req.Header.Set("Content-Type", w.FormDataContentType())
		req.Header.Set("Expect", "100-continue")
		client := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: time.Millisecond}}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("attempt %d: %v (the answer was lost)", attempt, err)
		}
		expectS3Error(t, resp, http.StatusForbidden, "AccessDenied")
		resp.Body.Close()
	}
	f.expectMissing(t, "uploads/refused")
}

package proxy

// Hostile requests (issue 5, "Bad input"): each goes through the real proxy
// handler over a real TCP connection to the fixture's httptest server, most
// as raw bytes so that nothing on the client side can tidy them up. Every
// case asserts the exact answer (an S3 error document where s3cond answers,
// net/http's own status where the server refuses before the handler runs)
// and that nothing was stored.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/s3cond/s3cond/internal/testkit"
)

// wireRequest is an HTTP/1.1 request written byte for byte: header lines in
// order, duplicates allowed, Content-Length whatever the test says.
type wireRequest struct {
	method string
	// target is the request-target exactly as sent ("/bucket/key?query").
	target string
	header [][2]string
	body   []byte
}

func (r *wireRequest) add(name, value string) { r.header = append(r.header, [2]string{name, value}) }

// values returns the values of the named header, in order.
func (r *wireRequest) values(name string) []string {
	var out []string
	for _, h := range r.header {
		if strings.EqualFold(h[0], name) {
			out = append(out, h[1])
		}
	}
	return out
}

func (r *wireRequest) bytes(host string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", r.method, r.target, host)
	for _, h := range r.header {
		fmt.Fprintf(&b, "%s: %s\r\n", h[0], h[1])
	}
	b.WriteString("\r\n")
	b.Write(r.body)
	return b.Bytes()
}

func payloadHashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// sign adds X-Amz-Date, the payload hash (unless the test already set
// x-amz-content-sha256 itself) and an Authorization header computed by
// aws-sdk-go-v2's signer over the request's header lines as they will be
// sent: duplicate lines are signed as S3 canonicalises them, joined by ','.
// Content-Length is left unsigned, as the AWS SDKs do for S3, so a test can
// lie about it without breaking the signature.
func (r *wireRequest) sign(t testing.TB, host, payloadHash string) {
	t.Helper()
	u, err := url.Parse("http://" + host + r.target)
	if err != nil {
		t.Fatalf("parse target %q: %v", r.target, err)
	}
	req := &http.Request{Method: r.method, URL: u, Host: host, Header: http.Header{}}
	if len(r.values("X-Amz-Content-Sha256")) == 0 {
		r.add("X-Amz-Content-Sha256", payloadHash)
	}
	for _, h := range r.header {
		if !strings.EqualFold(h[0], "Content-Length") {
			req.Header.Add(h[0], h[1])
		}
	}
	creds := aws.Credentials{AccessKeyID: testKeyID, SecretAccessKey: testSecret}
	testkit.SignAsWritten(t, req, creds, payloadHash)
	r.add("X-Amz-Date", req.Header.Get("X-Amz-Date"))
	r.add("Authorization", req.Header.Get("Authorization"))
}

// signedWirePut is a PUT of body to /proxytest/<rawKey>, signed over the body's
// SHA-256, with the true Content-Length.
func signedWirePut(t testing.TB, host, rawKey string, body []byte, header ...[2]string) *wireRequest {
	t.Helper()
	r := &wireRequest{method: http.MethodPut, target: "/" + bucketName + "/" + rawKey, body: body, header: header}
	r.add("Content-Length", strconv.Itoa(len(body)))
	r.sign(t, host, payloadHashOf(body))
	return r
}

// wireExchange is one request and its answer on a fresh connection.
type wireExchange struct {
	status int
	header http.Header
	body   []byte
	// conn stays open for tests that send more on it; closed at cleanup.
	conn   net.Conn
	reader *bufio.Reader
}

// send writes raw on a new connection to the proxy and reads one response.
// A failed write is not fatal: a server that refuses a request may close
// the connection before the client has finished writing, and its answer is
// still in the socket. halfClose ends the client's side of the stream after
// writing, as a client that gives up on its body does.
func sendWire(t *testing.T, proxyURL string, raw []byte, halfClose bool) *wireExchange {
	t.Helper()
	host := strings.TrimPrefix(proxyURL, "http://")
	conn, err := net.DialTimeout("tcp", host, 5*time.Second)
	if err != nil {
		t.Fatalf("dial proxy: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.SetDeadline(time.Now().Add(20 * time.Second)); err != nil {
		t.Fatal(err)
	}
	_, writeErr := conn.Write(raw)
	if halfClose {
		_ = conn.(*net.TCPConn).CloseWrite()
	}
	ex := &wireExchange{conn: conn, reader: bufio.NewReader(conn)}
	ex.read(t, writeErr)
	return ex
}

// read reads the next response on the wireExchange's connection.
func (ex *wireExchange) read(t *testing.T, writeErr error) {
	t.Helper()
	resp, err := http.ReadResponse(ex.reader, nil)
	if err != nil {
		t.Fatalf("read response (write error: %v): %v", writeErr, err)
	}
	defer resp.Body.Close()
	ex.body, err = io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read response body: %v", err)
	}
	ex.status, ex.header = resp.StatusCode, resp.Header
}

// wireErrorDoc is the part of an S3 error document the tests compare.
type wireErrorDoc struct {
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
}

// wantS3Error asserts an S3 error document with the given status and code,
// stamped with s3cond's request ID.
func (ex *wireExchange) wantS3Error(t *testing.T, status int, code string) {
	t.Helper()
	var doc wireErrorDoc
	if err := xml.Unmarshal(ex.body, &doc); err != nil || ex.status != status || doc.Code != code {
		t.Fatalf("got %d %q, want %d with S3 error %s", ex.status, ex.body, status, code)
	}
	// s3cond's own errors are application/xml; a relayed backend error
	// keeps the backend's type (gofakes3: text/xml).
	if ct := ex.header.Get("Content-Type"); !strings.Contains(ct, "xml") {
		t.Errorf("error document served as %q", ct)
	}
	if ex.header.Get("X-Amz-Request-Id") == "" {
		t.Errorf("S3 error without x-amz-request-id")
	}
}

// wantNetHTTPError asserts that net/http refused the request before the
// proxy handler ran: its plain-text status, no S3 request ID.
func (ex *wireExchange) wantNetHTTPError(t *testing.T, status int, bodyPrefix string) {
	t.Helper()
	if ex.status != status || !strings.HasPrefix(string(ex.body), bodyPrefix) {
		t.Fatalf("got %d %q, want net/http's %d %q", ex.status, ex.body, status, bodyPrefix)
	}
	if ex.header.Get("X-Amz-Request-Id") != "" {
		t.Fatalf("the proxy handler answered (request ID %s); net/http should have refused first", ex.header.Get("X-Amz-Request-Id"))
	}
}

// wantNotStored checks through the fixture's SDK client that key does
// not exist in the test bucket (HEAD 404 and GET NoSuchKey) and that no
// multipart upload was left behind for it.
func (f *fixture) wantNotStored(t *testing.T, key string) {
	t.Helper()
	ctx := context.Background()
	_, err := f.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucketName), Key: aws.String(key)})
	if code := errorCode(err); code != "NotFound" {
		t.Errorf("HEAD %q: %v, want 404 NotFound", key, err)
	}
	if _, err := f.get(t, key); errorCode(err) != "NoSuchKey" {
		t.Errorf("GET %q: %v, want NoSuchKey", key, err)
	}
	uploads, err := f.client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(bucketName), Prefix: aws.String(key)})
	if errorCode(err) == "NoSuchUpload" {
		// gofakes3 answers a listing that finds no upload with 404 NoSuchUpload.
		return
	}
	if err != nil {
		t.Fatalf("list multipart uploads: %v", err)
	}
	for _, u := range uploads.Uploads {
		if aws.ToString(u.Key) == key {
			t.Errorf("a multipart upload of %q was left behind (%s)", key, aws.ToString(u.UploadId))
		}
	}
}

// wantNoObjectsIn checks that a whole bucket holds no objects.
func (f *fixture) wantNoObjectsIn(t *testing.T, bucket string) {
	t.Helper()
	out, err := f.client.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatalf("list %s: %v", bucket, err)
	}
	for _, o := range out.Contents {
		t.Errorf("bucket %s holds %q", bucket, aws.ToString(o.Key))
	}
}

// wantNoKeyWithPrefix checks that the test bucket holds no key that starts
// with prefix.
func (f *fixture) wantNoKeyWithPrefix(t *testing.T, prefix string) {
	t.Helper()
	out, err := f.client.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(bucketName), Prefix: aws.String(prefix)})
	if err != nil {
		t.Fatalf("list %s: %v", bucketName, err)
	}
	for _, o := range out.Contents {
		t.Errorf("stored %d-byte key %.40q…", len(aws.ToString(o.Key)), aws.ToString(o.Key))
	}
}

func wireHost(proxyURL string) string { return strings.TrimPrefix(proxyURL, "http://") }

// paddingHeaders returns header lines of total size about n bytes (name, ": ",
// value and CRLF counted), in 1 KiB lines.
func paddingHeaders(n int) [][2]string {
	var out [][2]string
	for i := 0; n > 0; i++ {
		name := fmt.Sprintf("X-Pad%05d", i)
		size := min(1024, n) - len(name) - 4
		out = append(out, [2]string{name, strings.Repeat("p", max(size, 1))})
		n -= 1024
	}
	return out
}

func TestHostileHeaderSection(t *testing.T) {
	f := newFixture(t, false)
	host := wireHost(f.proxyURL)

	t.Run("over net/http's limit is 431 before the handler", func(t *testing.T) {
		// httptest's server keeps http.Server's default MaxHeaderBytes
		// (1 MiB, plus 4 KiB of slack net/http allows).
		r := signedWirePut(t, host, "huge-headers-over", []byte("x"), paddingHeaders(1<<20+8<<10)...)
		sendWire(t, f.proxyURL, r.bytes(host), false).
			wantNetHTTPError(t, http.StatusRequestHeaderFieldsTooLarge, "431 Request Header Fields Too Large")
		f.wantNotStored(t, "huge-headers-over")
	})
	t.Run("1 MiB unsigned reaches the handler and is RequestHeaderSectionTooLarge", func(t *testing.T) {
		r := &wireRequest{method: http.MethodPut, target: "/" + bucketName + "/huge-headers-anon", header: paddingHeaders(1 << 20), body: []byte("x")}
		r.add("Content-Length", "1")
		sendWire(t, f.proxyURL, r.bytes(host), false).wantS3Error(t, http.StatusBadRequest, "RequestHeaderSectionTooLarge")
		f.wantNotStored(t, "huge-headers-anon")
	})
	t.Run("1 MiB of unsigned headers on a signed PUT: S3's limit, nothing forwarded", func(t *testing.T) {
		// The headers fit the fixture's front server (cmd/s3cond's bounds
		// the block at proxy.MaxHeaderBytes); s3cond refuses the section
		// as over S3's 8 KiB before the signature and the backend.
		r := signedWirePut(t, host, "huge-headers-signed", []byte("x"))
		r.header = append(r.header, paddingHeaders(1<<20)...)
		sendWire(t, f.proxyURL, r.bytes(host), false).wantS3Error(t, http.StatusBadRequest, "RequestHeaderSectionTooLarge")
		f.wantNotStored(t, "huge-headers-signed")
	})
}

// junkQuery is n query parameters that mean nothing to S3. They are
// x-amz-* parameters (hoisted headers, which s3cond accepts by prefix), each
// named differently: s3cond refuses parameters S3 does not have
// (internal/operation/allowlist.go) and a parameter given twice (paramquery.go).
func junkQuery(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = "x-amz-junk" + strconv.Itoa(i) + "=" + strconv.Itoa(i)
	}
	return strings.Join(parts, "&")
}

// TestHostileQueryParameters sends signed requests with 10 000 and 10 001
// query parameters. Go's net/url (since 1.24) parses at most 10 000 and
// returns no parameters at all beyond that, while s3cond's verifier reads
// the raw query itself and accepts the signature; the raw query is then
// forwarded byte for byte. A backend whose parser has no such limit
// (fasthttp-based versitygw, AWS S3) would see a different operation than
// the one s3cond classified: a DeleteObjects it never checked per-key ETags
// for, a CompleteMultipartUpload whose If-None-Match it never enforced. So
// past the limit s3cond must answer 400 itself and contact no backend.
func TestHostileQueryParameters(t *testing.T) {
	f := newFixture(t, false)
	host := wireHost(f.proxyURL)
	if _, err := f.put(t, "victim", "original", nil); err != nil {
		t.Fatal(err)
	}
	createOverVictim := func(n int) *wireRequest {
		body := []byte("overwrite")
		r := &wireRequest{method: http.MethodPut, target: "/" + bucketName + "/victim?" + junkQuery(n), body: body}
		r.add("If-None-Match", "*")
		r.add("Content-Length", strconv.Itoa(len(body)))
		r.signBeyondGoQueryLimit(t, host, payloadHashOf(body))
		return r
	}
	deleteVictimWithWrongETag := func(n int) *wireRequest {
		body := []byte(`<Delete><Object><Key>victim</Key><ETag>"00000000000000000000000000000000"</ETag></Object></Delete>`)
		r := &wireRequest{method: http.MethodPost, target: "/" + bucketName + "?delete&" + junkQuery(n-1), body: body}
		r.add("Content-Length", strconv.Itoa(len(body)))
		r.signBeyondGoQueryLimit(t, host, payloadHashOf(body))
		return r
	}
	startUpload := func(n int) *wireRequest {
		r := &wireRequest{method: http.MethodPost, target: "/" + bucketName + "/qp-upload?uploads&" + junkQuery(n-1)}
		r.add("Content-Length", "0")
		r.signBeyondGoQueryLimit(t, host, payloadHashOf(nil))
		return r
	}
	victimIntact := func(t *testing.T) {
		t.Helper()
		if got, err := f.get(t, "victim"); got != "original" {
			t.Fatalf("victim now holds %q (%v)", got, err)
		}
	}

	t.Run("10000: create over an existing key is 412", func(t *testing.T) {
		sendWire(t, f.proxyURL, createOverVictim(10000).bytes(host), false).wantS3Error(t, http.StatusPreconditionFailed, "PreconditionFailed")
		victimIntact(t)
	})
	t.Run("10000: DeleteObjects with a wrong ETag is a per-key 412", func(t *testing.T) {
		ex := sendWire(t, f.proxyURL, deleteVictimWithWrongETag(10000).bytes(host), false)
		if ex.status != http.StatusOK || !bytes.Contains(ex.body, []byte("<Code>PreconditionFailed</Code>")) {
			t.Fatalf("got %d %s, want 200 with a per-key PreconditionFailed", ex.status, ex.body)
		}
		victimIntact(t)
	})
	for name, build := range map[string]func(int) *wireRequest{
		"create over an existing key":     createOverVictim,
		"DeleteObjects with a wrong ETag": deleteVictimWithWrongETag,
		"CreateMultipartUpload":           startUpload,
	} {
		t.Run("10001: "+name+" is refused by s3cond", func(t *testing.T) {
			ex := sendWire(t, f.proxyURL, build(10001).bytes(host), false)
			if id := ex.header.Get("X-S3cond-Backend-Request-Id"); id != "" {
				t.Errorf("forwarded to the backend (its request %s) although net/url saw no parameters: got %d %s", id, ex.status, ex.body)
			}
			var doc wireErrorDoc
			_ = xml.Unmarshal(ex.body, &doc)
			if ex.status != http.StatusBadRequest || (doc.Code != "InvalidArgument" && doc.Code != "InvalidURI") {
				t.Errorf("got %d %s, want 400 InvalidArgument (or InvalidURI) from s3cond", ex.status, doc.Code)
			}
			victimIntact(t)
			f.wantNotStored(t, "qp-upload")
		})
	}
}

// signBeyondGoQueryLimit signs like sign, but builds the canonical query
// itself. aws-sdk-go-v2's signer reads the query through net/url, which
// since Go 1.24 drops every parameter of a query with more than 10 000 of
// them, so it cannot sign such a request. Only plain ASCII paths and
// queries that need no escaping are supported.
func (r *wireRequest) signBeyondGoQueryLimit(t *testing.T, host, payloadHash string) {
	t.Helper()
	now := time.Now().UTC()
	amzDate, day := now.Format("20060102T150405Z"), now.Format("20060102")
	r.add("X-Amz-Content-Sha256", payloadHash)
	r.add("X-Amz-Date", amzDate)

	path, rawQuery, _ := strings.Cut(r.target, "?")
	params := strings.Split(rawQuery, "&")
	for i, p := range params {
		if !strings.Contains(p, "=") {
			params[i] = p + "="
		}
	}
	slices.SortFunc(params, func(a, b string) int {
		an, av, _ := strings.Cut(a, "=")
		bn, bv, _ := strings.Cut(b, "=")
		if c := strings.Compare(an, bn); c != 0 {
			return c
		}
		return strings.Compare(av, bv)
	})

	headers := map[string][]string{"host": {host}}
	for _, h := range r.header {
		if name := strings.ToLower(h[0]); name != "content-length" {
			headers[name] = append(headers[name], strings.TrimSpace(h[1]))
		}
	}
	names := slices.Sorted(maps.Keys(headers))
	var canonicalHeaders strings.Builder
	for _, name := range names {
		canonicalHeaders.WriteString(name + ":" + strings.Join(headers[name], ",") + "\n")
	}
	signedHeaders := strings.Join(names, ";")
	canonical := strings.Join([]string{r.method, path, strings.Join(params, "&"), canonicalHeaders.String(), signedHeaders, payloadHash}, "\n")

	scope := day + "/us-east-1/s3/aws4_request"
	stringToSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + payloadHashOf([]byte(canonical))
	key := []byte("AWS4" + testSecret)
	for _, part := range []string{day, "us-east-1", "s3", "aws4_request", stringToSign} {
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(part))
		key = mac.Sum(nil)
	}
	r.add("Authorization", fmt.Sprintf("AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%x", testKeyID, scope, signedHeaders, key))
}

func TestHostileKeyBytes(t *testing.T) {
	f := newFixture(t, false)
	host := wireHost(f.proxyURL)
	for _, tc := range []struct {
		name, rawKey, key string
	}{
		{"escaped 0xFF", "bad%FFkey", "bad\xffkey"},
		{"raw 0xFF byte", "bad\xffkey", "bad\xffkey"},
		{"truncated UTF-8 sequence", "bad%E2%82key", "bad\xe2\x82key"},
		{"overlong encoding of '/'", "bad%C0%AFkey", "bad\xc0\xafkey"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sendWire(t, f.proxyURL, signedWirePut(t, host, tc.rawKey, []byte("x")).bytes(host), false).
				wantS3Error(t, http.StatusBadRequest, "InvalidURI")
			f.wantNoObjectsIn(t, bucketName)
		})
	}
	t.Run("malformed escape", func(t *testing.T) {
		// net/http cannot parse the request-target at all.
		r := &wireRequest{method: http.MethodPut, target: "/" + bucketName + "/bad%zzkey", body: []byte("x")}
		r.add("Content-Length", "1")
		sendWire(t, f.proxyURL, r.bytes(host), false).wantNetHTTPError(t, http.StatusBadRequest, "400 Bad Request")
		f.wantNoObjectsIn(t, bucketName)
	})
}

func TestHostileKeyLength(t *testing.T) {
	f := newFixture(t, false)
	for _, tc := range []struct {
		name string
		key  string
		ok   bool
	}{
		{"1024 ASCII bytes", strings.Repeat("k", 1024), true},
		{"1025 ASCII bytes", strings.Repeat("x", 1025), false},
		{"512 two-byte runes (1024 bytes)", strings.Repeat("é", 512), true},
		{"513 two-byte runes (1026 bytes)", strings.Repeat("ü", 513), false},
		{"64 KiB", strings.Repeat("z", 64<<10), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.put(t, tc.key, "body", nil)
			if tc.ok {
				if err != nil {
					t.Fatalf("put: %v", err)
				}
				if got, err := f.get(t, tc.key); err != nil || got != "body" {
					t.Fatalf("get = %q, %v", got, err)
				}
				return
			}
			if code := errorCode(err); code != "KeyTooLongError" {
				t.Fatalf("put: %v, want KeyTooLongError", err)
			}
			// A HEAD of the long key itself would only meet KeyTooLongError
			// again; look for any object that starts like it instead.
			f.wantNoKeyWithPrefix(t, tc.key[:2])
		})
	}
	t.Run("raw 1025-byte key", func(t *testing.T) {
		host := wireHost(f.proxyURL)
		ex := sendWire(t, f.proxyURL, signedWirePut(t, host, strings.Repeat("r", 1025), []byte("x")).bytes(host), false)
		ex.wantS3Error(t, http.StatusBadRequest, "KeyTooLongError")
		f.wantNoKeyWithPrefix(t, "r")
	})
}

// TestHostileDotSegmentsAreLiteralKeys follows S3 under key_policy opaque
// (a store whose keys are opaque strings): a key is a literal string, so
// "a/../b", "./c" and "d//e" are keys of their own, never resolved, and
// "/bucket/../other/k" is the key "../other/k" in bucket, not an object of
// bucket "other".
func TestHostileDotSegmentsAreLiteralKeys(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{keyPolicy: KeyPolicyOpaque})
	ctx := context.Background()
	keys := []string{"a/../b", "./c", "d/./e", "f//g", "//h", "i/", "..", ".", "../j", "k/..", "%2E%2E"}
	for _, key := range keys {
		if _, err := f.put(t, key, "body of "+key, nil); err != nil {
			t.Fatalf("put %q: %v", key, err)
		}
	}
	for _, key := range keys {
		if got, err := f.get(t, key); err != nil || got != "body of "+key {
			t.Errorf("get %q = %q, %v", key, got, err)
		}
	}
	out, err := f.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucketName)})
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, o := range out.Contents {
		listed = append(listed, aws.ToString(o.Key))
	}
	want := slices.Clone(keys)
	slices.Sort(want)
	slices.Sort(listed)
	if !slices.Equal(listed, want) {
		t.Fatalf("bucket lists %q, want exactly the literal keys %q", listed, want)
	}

	t.Run("never escapes the bucket", func(t *testing.T) {
		const other = "otherbucket"
		if _, err := f.client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(other)}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(other), Key: aws.String("secret"), Body: strings.NewReader("other's secret")}); err != nil {
			t.Fatal(err)
		}
		host := wireHost(f.proxyURL)
		for _, rawKey := range []string{"../" + other + "/secret", "%2E%2E/" + other + "/secret", "..%2F" + other + "%2Fsecret"} {
			get := &wireRequest{method: http.MethodGet, target: "/" + bucketName + "/" + rawKey}
			get.sign(t, host, payloadHashOf(nil))
			sendWire(t, f.proxyURL, get.bytes(host), false).wantS3Error(t, http.StatusNotFound, "NoSuchKey")

			put := signedWirePut(t, host, rawKey, []byte("overwrite"))
			if ex := sendWire(t, f.proxyURL, put.bytes(host), false); ex.status != http.StatusOK {
				t.Fatalf("put %s: %d %s", rawKey, ex.status, ex.body)
			}
			if got, err := f.get(t, "../"+other+"/secret"); err != nil || got != "overwrite" {
				t.Fatalf("the literal key in %s holds %q, %v", bucketName, got, err)
			}
			if _, err := f.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucketName), Key: aws.String("../" + other + "/secret")}); err != nil {
				t.Fatal(err)
			}
		}
		got, err := f.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(other), Key: aws.String("secret")})
		if err != nil {
			t.Fatal(err)
		}
		defer got.Body.Close()
		if b, _ := io.ReadAll(got.Body); string(b) != "other's secret" {
			t.Fatalf("%s/secret now holds %q", other, b)
		}
	})
}

func TestHostileDuplicateHeaders(t *testing.T) {
	f := newFixture(t, false)
	host := wireHost(f.proxyURL)
	if _, err := f.put(t, "existing", "original", nil); err != nil {
		t.Fatal(err)
	}
	body := []byte("duplicate")

	t.Run("two Authorization headers", func(t *testing.T) {
		r := signedWirePut(t, host, "dup-auth", body)
		r.add("Authorization", r.values("Authorization")[0])
		sendWire(t, f.proxyURL, r.bytes(host), false).wantS3Error(t, http.StatusBadRequest, "AuthorizationHeaderMalformed")
		f.wantNotStored(t, "dup-auth")
	})
	t.Run("two x-amz-content-sha256, the first not the body's", func(t *testing.T) {
		r := &wireRequest{method: http.MethodPut, target: "/" + bucketName + "/dup-sha", body: body}
		r.add("Content-Length", strconv.Itoa(len(body)))
		r.add("X-Amz-Content-Sha256", payloadHashOf([]byte("something else")))
		r.add("X-Amz-Content-Sha256", payloadHashOf(body))
		r.sign(t, host, payloadHashOf([]byte("something else")))
		sendWire(t, f.proxyURL, r.bytes(host), false).wantS3Error(t, http.StatusBadRequest, "XAmzContentSHA256Mismatch")
		f.wantNotStored(t, "dup-sha")
	})
	t.Run("two x-amz-content-sha256, the second not the body's", func(t *testing.T) {
		// The first value is the payload hash s3cond verifies (and the
		// one the client's signature ends with); the body matches it, so
		// the upload is accepted and exactly the signed bytes are stored.
		// This pins down that the second value is never the one checked.
		r := &wireRequest{method: http.MethodPut, target: "/" + bucketName + "/dup-sha2", body: body}
		r.add("Content-Length", strconv.Itoa(len(body)))
		r.add("X-Amz-Content-Sha256", payloadHashOf(body))
		r.add("X-Amz-Content-Sha256", payloadHashOf([]byte("something else")))
		r.sign(t, host, payloadHashOf(body))
		if ex := sendWire(t, f.proxyURL, r.bytes(host), false); ex.status != http.StatusOK {
			t.Fatalf("got %d %s, want 200", ex.status, ex.body)
		}
		if got, err := f.get(t, "dup-sha2"); err != nil || got != string(body) {
			t.Fatalf("stored %q, %v; want the signed body", got, err)
		}
	})
	t.Run("two different Content-Length", func(t *testing.T) {
		r := signedWirePut(t, host, "dup-length", body)
		r.add("Content-Length", strconv.Itoa(len(body)-1))
		sendWire(t, f.proxyURL, r.bytes(host), false).wantNetHTTPError(t, http.StatusBadRequest, "400 Bad Request")
		f.wantNotStored(t, "dup-length")
	})
	t.Run("Content-Length and Transfer-Encoding together", func(t *testing.T) {
		// net/http frames the body by Transfer-Encoding and drops
		// Content-Length (RFC 9112 §6.3), so the proxy forwards a verified
		// body of unknown length; gofakes3 refuses a PUT without a length,
		// and s3cond relays its 411. What matters: one framing, no
		// smuggled second request, nothing stored.
		r := &wireRequest{method: http.MethodPut, target: "/" + bucketName + "/cl-and-te"}
		r.add("Content-Length", strconv.Itoa(len(body)))
		r.add("Transfer-Encoding", "chunked")
		r.sign(t, host, payloadHashOf(body))
		r.body = []byte(fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(body), body))
		sendWire(t, f.proxyURL, r.bytes(host), false).wantS3Error(t, http.StatusLengthRequired, "MissingContentLength")
		f.wantNotStored(t, "cl-and-te")
	})
	t.Run("two If-None-Match over an existing key", func(t *testing.T) {
		for _, second := range []string{"*", `"0123"`} {
			r := &wireRequest{method: http.MethodPut, target: "/" + bucketName + "/existing", body: body}
			r.add("Content-Length", strconv.Itoa(len(body)))
			r.add("If-None-Match", "*")
			r.add("If-None-Match", second)
			r.sign(t, host, payloadHashOf(body))
			// Joined, the values are not "*": S3's 501 for any other
			// If-None-Match, never an unconditional write.
			sendWire(t, f.proxyURL, r.bytes(host), false).wantS3Error(t, http.StatusNotImplemented, "NotImplemented")
			if got, _ := f.get(t, "existing"); got != "original" {
				t.Fatalf("existing now holds %q", got)
			}
		}
	})
	t.Run("two If-None-Match on a new key", func(t *testing.T) {
		r := &wireRequest{method: http.MethodPut, target: "/" + bucketName + "/dup-inm", body: body}
		r.add("Content-Length", strconv.Itoa(len(body)))
		r.add("If-None-Match", "*")
		r.add("If-None-Match", "*")
		r.sign(t, host, payloadHashOf(body))
		sendWire(t, f.proxyURL, r.bytes(host), false).wantS3Error(t, http.StatusNotImplemented, "NotImplemented")
		f.wantNotStored(t, "dup-inm")
	})
}

// TestHostileUnsignedAmzHeaders adds x-amz-* headers after signing, as a
// party between client and s3cond could. S3 refuses any x-amz-* header the
// signature does not cover with 403 AccessDenied, "There were headers
// present in the request which were not signed", naming them in
// <HeadersNotSigned>; s3cond must not re-sign them for the backend.
func TestHostileUnsignedAmzHeaders(t *testing.T) {
	f := newFixture(t, false)
	host := wireHost(f.proxyURL)
	if _, err := f.put(t, "copy-source", "source body", nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, header, value string }{
		{"user metadata", "X-Amz-Meta-Injected", "yes"},
		{"a copy source that turns the PUT into a copy", "X-Amz-Copy-Source", "/" + bucketName + "/copy-source"},
		{"a canned ACL", "X-Amz-Acl", "public-read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "unsigned-" + strings.ToLower(tc.header)
			r := signedWirePut(t, host, key, []byte("signed body"))
			r.add(tc.header, tc.value)
			ex := sendWire(t, f.proxyURL, r.bytes(host), false)
			ex.wantS3Error(t, http.StatusForbidden, "AccessDenied")
			if !bytes.Contains(ex.body, []byte("not signed")) {
				t.Errorf("AccessDenied without the unsigned-headers message: %s", ex.body)
			}
			f.wantNotStored(t, key)
		})
	}
}

// TestHostileShortBody declares far more bytes than it sends and then
// gives up. The proxy has already started the backend request (the body
// streams); it must abort it so the backend stores nothing, and for a
// conditional write release the lease.
//
// The declared length is 64 MiB, not gigabytes: gofakes3's memory backend
// allocates the whole declared Content-Length before reading (10 GiB took
// it over a minute here), and s3cond passes the declared length on.
func TestHostileShortBody(t *testing.T) {
	f := newFixture(t, false)
	host := wireHost(f.proxyURL)
	const declared = 64 << 20
	shortBody := []byte("only a few bytes of 64 MiB")
	shortPut := func(key string, extra ...[2]string) *wireRequest {
		r := &wireRequest{method: http.MethodPut, target: "/" + bucketName + "/" + key, body: shortBody, header: extra}
		r.add("Content-Length", strconv.Itoa(declared))
		r.sign(t, host, "UNSIGNED-PAYLOAD")
		return r
	}

	t.Run("client half-closes: IncompleteBody", func(t *testing.T) {
		sendWire(t, f.proxyURL, shortPut("short").bytes(host), true).wantS3Error(t, http.StatusBadRequest, "IncompleteBody")
		f.wantNotStored(t, "short")
	})
	t.Run("conditional, client half-closes: IncompleteBody and the lease is released", func(t *testing.T) {
		sendWire(t, f.proxyURL, shortPut("short-cond", [2]string{"If-None-Match", "*"}).bytes(host), true).
			wantS3Error(t, http.StatusBadRequest, "IncompleteBody")
		f.wantNotStored(t, "short-cond")
		start := time.Now()
		if _, err := f.put(t, "short-cond", "good", func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") }); err != nil {
			t.Fatalf("create after the abandoned upload: %v", err)
		}
		if waited := time.Since(start); waited > 2*time.Second {
			t.Fatalf("create waited %s: the abandoned upload's lease was left held", waited)
		}
	})
	t.Run("client drops the connection", func(t *testing.T) {
		// The backend reports when the upload reaches it and how reading its
		// body ended, so the client goes only once the backend request is
		// open, and the test knows when the backend is done with it.
		started, ended := make(chan struct{}), make(chan error, 1)
		f := newFixtureWith(t, fixtureOptions{backendHook: func(r *http.Request) {
			if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/dropped") {
				close(started)
				r.Body = &endReportingBody{ReadCloser: r.Body, ended: ended}
			}
		}})
		host := wireHost(f.proxyURL)
		conn, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		r := &wireRequest{method: http.MethodPut, target: "/" + bucketName + "/dropped", body: shortBody}
		r.add("Content-Length", strconv.Itoa(declared))
		r.sign(t, host, "UNSIGNED-PAYLOAD")
		if _, err := conn.Write(r.bytes(host)); err != nil {
			t.Fatal(err)
		}
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatal("the upload never reached the backend")
		}
		conn.Close()
		select {
		case err := <-ended:
			if err == nil || errors.Is(err, io.EOF) {
				t.Fatalf("the backend read the body to its end (%v): the upload was not aborted", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the backend request was never ended after the client left")
		}
		f.wantNotStored(t, "dropped")
	})
}

// TestHostileBodyBeyondContentLength sends more bytes than Content-Length.
// HTTP/1.1 frames the body by Content-Length, so the proxy reads exactly
// that many bytes and the rest is the start of the next request on the
// connection: it must be parsed as such (here an unsigned PUT, refused),
// never appended to the object.
func TestHostileBodyBeyondContentLength(t *testing.T) {
	f := newFixture(t, false)
	host := wireHost(f.proxyURL)
	full := []byte("the whole body the client signed, longer than declared")
	declared := 10

	smuggled := &wireRequest{method: http.MethodPut, target: "/" + bucketName + "/smuggled", body: []byte("x")}
	smuggled.add("Content-Length", "1")
	tail := append(full[declared:len(full):len(full)], smuggled.bytes(host)...)

	t.Run("signed over the whole body", func(t *testing.T) {
		r := &wireRequest{method: http.MethodPut, target: "/" + bucketName + "/longer", body: full[:declared]}
		r.add("Content-Length", strconv.Itoa(declared))
		r.sign(t, host, payloadHashOf(full))
		r.body = append(slices.Clone(full[:declared]), tail...)
		ex := sendWire(t, f.proxyURL, r.bytes(host), false)
		ex.wantS3Error(t, http.StatusBadRequest, "XAmzContentSHA256Mismatch")
		f.wantNotStored(t, "longer")
		ex.readNextOrClosed(t)
		f.wantNotStored(t, "smuggled")
	})
	t.Run("signed over the declared bytes", func(t *testing.T) {
		r := &wireRequest{method: http.MethodPut, target: "/" + bucketName + "/declared", body: full[:declared]}
		r.add("Content-Length", strconv.Itoa(declared))
		r.sign(t, host, payloadHashOf(full[:declared]))
		r.body = append(slices.Clone(full[:declared]), tail...)
		ex := sendWire(t, f.proxyURL, r.bytes(host), false)
		if ex.status != http.StatusOK {
			t.Fatalf("got %d %s, want 200 for the declared bytes", ex.status, ex.body)
		}
		if got, err := f.get(t, "declared"); err != nil || got != string(full[:declared]) {
			t.Fatalf("stored %q, %v; want exactly the %d declared bytes", got, err, declared)
		}
		ex.readNextOrClosed(t)
		f.wantNotStored(t, "smuggled")
	})
}

// readNextOrClosed reads what follows on the connection: either the
// server closed it, or the leftover bytes were parsed as a request of
// their own and refused. Any 2xx would mean they were acted on.
func (ex *wireExchange) readNextOrClosed(t *testing.T) {
	t.Helper()
	resp, err := http.ReadResponse(ex.reader, nil)
	if err != nil {
		return // closed
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	t.Logf("leftover bytes answered %d %s", resp.StatusCode, b)
	if resp.StatusCode < 400 || resp.StatusCode >= 500 {
		t.Fatalf("leftover bytes answered %d %s, want a 4xx refusal", resp.StatusCode, b)
	}
}

func TestHostileBucketNames(t *testing.T) {
	f := newFixture(t, false)
	host := wireHost(f.proxyURL)
	ctx := context.Background()
	for _, tc := range []struct{ name, rawBucket string }{
		{"too short", "ab"},
		{"too long", strings.Repeat("b", 64)},
		{"forbidden character", "bad!bucket"},
		{"space", "bad%20bucket"},
		{"escaped slash", "bad%2Fbucket"},
		{"invalid UTF-8", "bad%FFbucket"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &wireRequest{method: http.MethodPut, target: "/" + tc.rawBucket + "/key", body: []byte("x")}
			r.add("Content-Length", "1")
			r.sign(t, host, payloadHashOf([]byte("x")))
			sendWire(t, f.proxyURL, r.bytes(host), false).wantS3Error(t, http.StatusBadRequest, "InvalidBucketName")

			create := &wireRequest{method: http.MethodPut, target: "/" + tc.rawBucket}
			create.add("Content-Length", "0")
			create.sign(t, host, payloadHashOf(nil))
			sendWire(t, f.proxyURL, create.bytes(host), false).wantS3Error(t, http.StatusBadRequest, "InvalidBucketName")
		})
	}
	buckets, err := f.client.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range buckets.Buckets {
		if name := aws.ToString(b.Name); name != bucketName {
			t.Errorf("backend gained bucket %q", name)
		}
	}
}

func TestHostileNoAuthentication(t *testing.T) {
	f := newFixture(t, false)
	host := wireHost(f.proxyURL)
	if _, err := f.put(t, "existing", "original", nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		request func() *wireRequest
		key     string
	}{
		{"PUT", func() *wireRequest {
			r := &wireRequest{method: http.MethodPut, target: "/" + bucketName + "/anon", body: []byte("x")}
			r.add("Content-Length", "1")
			return r
		}, "anon"},
		{"PUT with a payload hash", func() *wireRequest {
			r := &wireRequest{method: http.MethodPut, target: "/" + bucketName + "/anon-hash", body: []byte("x")}
			r.add("Content-Length", "1")
			r.add("X-Amz-Content-Sha256", payloadHashOf([]byte("x")))
			return r
		}, "anon-hash"},
		{"conditional PUT over an existing key", func() *wireRequest {
			r := &wireRequest{method: http.MethodPut, target: "/" + bucketName + "/existing", body: []byte("x")}
			r.add("Content-Length", "1")
			r.add("If-Match", "*")
			return r
		}, ""},
		{"GET", func() *wireRequest {
			return &wireRequest{method: http.MethodGet, target: "/" + bucketName + "/existing"}
		}, ""},
		{"CreateMultipartUpload", func() *wireRequest {
			r := &wireRequest{method: http.MethodPost, target: "/" + bucketName + "/anon-upload?uploads"}
			r.add("Content-Length", "0")
			return r
		}, "anon-upload"},
		{"DELETE", func() *wireRequest {
			return &wireRequest{method: http.MethodDelete, target: "/" + bucketName + "/existing"}
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sendWire(t, f.proxyURL, tc.request().bytes(host), false).wantS3Error(t, http.StatusForbidden, "AccessDenied")
			if tc.key != "" {
				f.wantNotStored(t, tc.key)
			}
			if got, err := f.get(t, "existing"); err != nil || got != "original" {
				t.Fatalf("existing now %q, %v", got, err)
			}
		})
	}
}

// endReportingBody stands for the backend's view of an upload body: it
// reports, once, how reading it ended (nil if it was closed before any error).
type endReportingBody struct {
	io.ReadCloser
	ended chan<- error
	once  sync.Once
}

func (b *endReportingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.once.Do(func() { b.ended <- err })
	}
	return n, err
}

func (b *endReportingBody) Close() error {
	b.once.Do(func() { b.ended <- nil })
	return b.ReadCloser.Close()
}

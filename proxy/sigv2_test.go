package proxy

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/internal/requestline"
	"github.com/s3cond/s3cond/internal/testkit"
	"github.com/s3cond/s3cond/sigv4"
)

// signV2 is a SigV2 client for requests without x-amz-* headers or
// subresources: HMAC-SHA1 of method, Content-MD5, Content-Type, date line
// and path, as AWS's SigV2 documentation defines it.
func signV2(method, contentType, dateLine, path string) string {
	mac := hmac.New(sha1.New, []byte(testSecret))
	mac.Write([]byte(method + "\n\n" + contentType + "\n" + dateLine + "\n" + path))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// sigV2Fixture is a proxy accepting SigV2 (or not) in front of a fake store
// whose received queries and Authorization headers are recorded.
func sigV2Fixture(t *testing.T, enabled bool) (endpoint string, seen func() []*http.Request) {
	t.Helper()
	var mu sync.Mutex
	var received []*http.Request
	backend, _ := fakeBackendWith(t, "default", func(r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		received = append(received, r.Clone(context.Background()))
	})
	verifier := sigv4.NewVerifier(staticKeys{}, "us-east-1")
	verifier.SignatureV2 = enabled
	front := httptest.NewServer(New(Options{Auth: verifier, Access: staticKeys{}, Backend: backend, Log: zerolog.Nop()}))
	t.Cleanup(front.Close)
	client := newClient(front.URL, testKeyID)
	if _, err := client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String("alpha"), Key: aws.String("k"),
		Body: strings.NewReader("legacy")}); err != nil {
		t.Fatal(err)
	}
	return front.URL, func() []*http.Request {
		mu.Lock()
		defer mu.Unlock()
		return append([]*http.Request(nil), received...)
	}
}

func do(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func presignedV2URL(endpoint, keyID, path string) string {
	expires := strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)
	return endpoint + path + "?AWSAccessKeyId=" + keyID + "&Expires=" + expires +
		"&Signature=" + url.QueryEscape(signV2("GET", "", expires, path))
}

func TestSignatureV2PresignedURLIsVerifiedAndNotForwarded(t *testing.T) {
	endpoint, seen := sigV2Fixture(t, true)
	req, _ := http.NewRequest(http.MethodGet, presignedV2URL(endpoint, testKeyID, "/alpha/k"), nil)
	if status, body := do(t, req); status != http.StatusOK || body != "legacy" {
		t.Fatalf("SigV2 presigned GET: %d %q", status, body)
	}
	last := seen()[len(seen())-1]
	for _, name := range requestline.SignatureV2Params {
		if strings.Contains(last.URL.RawQuery, name) {
			t.Errorf("store got %s: query %q", name, last.URL.RawQuery)
		}
	}
	if auth := last.Header.Get("Authorization"); !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 ") {
		t.Errorf("store got Authorization %q, want s3cond's SigV4", auth)
	}
}

func TestSignatureV2HeaderHasTheKeysGrants(t *testing.T) {
	endpoint, _ := sigV2Fixture(t, true)
	put := func(keyID, path string) (int, string) {
		date := time.Now().UTC().Format(http.TimeFormat)
		req, _ := http.NewRequest(http.MethodPut, endpoint+path, strings.NewReader("v2 body"))
		req.Header.Set("Date", date)
		req.Header.Set("Content-Type", "text/plain")
		req.Header.Set("Authorization", "AWS "+keyID+":"+signV2("PUT", "text/plain", date, path))
		return do(t, req)
	}
	if status, body := put(testKeyID, "/alpha/v2"); status != http.StatusOK {
		t.Fatalf("SigV2 PUT: %d %s", status, body)
	}
	// grantedID may write alpha and granted-* only: SigV2 does not widen it.
	if status, body := put(grantedID, "/beta/v2"); status != http.StatusForbidden || !strings.Contains(body, "AccessDenied") {
		t.Fatalf("SigV2 PUT outside the key's grant: %d %s", status, body)
	}
	if status, body := put(readOnlyID, "/alpha/v2"); status != http.StatusForbidden || !strings.Contains(body, "AccessDenied") {
		t.Fatalf("SigV2 PUT with a read-only key: %d %s", status, body)
	}
}

// The SigV2 parameters authenticate only a SigV2 presigned URL: on any
// other request they are refused as before SigV2 was accepted (501), and
// with SigV2 off a SigV2 URL keeps S3's 400 InvalidRequest.
func TestSignatureV2ParametersOutsideSigV2(t *testing.T) {
	endpoint, _ := sigV2Fixture(t, true)
	headerSigned := func(query string) *http.Request {
		date := time.Now().UTC().Format(http.TimeFormat)
		req, _ := http.NewRequest(http.MethodGet, endpoint+"/alpha/k?"+query, nil)
		req.Header.Set("Date", date)
		req.Header.Set("Authorization", "AWS "+testKeyID+":"+signV2("GET", "", date, "/alpha/k"))
		return req
	}
	if status, body := do(t, headerSigned("Signature=x")); status != http.StatusBadRequest || !strings.Contains(body, "Only one auth mechanism") {
		t.Fatalf("SigV2 header with a SigV2 query signature: %d %s", status, body)
	}
	if status, body := do(t, headerSigned("Expires=5")); status != http.StatusNotImplemented || !strings.Contains(body, "Expires") {
		t.Fatalf("SigV2 header with Expires: %d %s", status, body)
	}

	off, _ := sigV2Fixture(t, false)
	req, _ := http.NewRequest(http.MethodGet, presignedV2URL(off, testKeyID, "/alpha/k"), nil)
	if status, body := do(t, req); status != http.StatusBadRequest || !strings.Contains(body, "InvalidRequest") {
		t.Fatalf("SigV2 URL with SigV2 off: %d %s", status, body)
	}
	for base, unsignedStatus := range map[string]int{endpoint: http.StatusForbidden, off: http.StatusNotImplemented} {
		signed, _ := http.NewRequest(http.MethodGet, base+"/alpha/k?Expires=5", nil)
		testkit.Sign(t, signed, aws.Credentials{AccessKeyID: testKeyID, SecretAccessKey: testSecret}, sigv4.EmptyPayloadHash)
		if status, body := do(t, signed); status != http.StatusNotImplemented || !strings.Contains(body, "Expires") {
			t.Fatalf("SigV4 request with Expires: %d %s", status, body)
		}
		unsigned, _ := http.NewRequest(http.MethodGet, base+"/alpha/k?Signature=x", nil)
		// On, a lone Signature is an incomplete SigV2 URL (403
		// AccessDenied, as S3); off, a parameter s3cond does not forward.
		if status, body := do(t, unsigned); status != unsignedStatus || !strings.Contains(body, "Signature") {
			t.Fatalf("unsigned request with Signature: %d %s", status, body)
		}
	}
}

package proxy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/internal/backendhttp"
	"github.com/s3cond/s3cond/internal/testkit"
	"github.com/s3cond/s3cond/sigv4"
)

// backendKeyID is the access key ID s3cond signs with in these tests; no
// client may ever see it.
const backendKeyID = "AKIDBACKENDROOT"

// scriptedProxy runs the proxy in front of answer, which stands for an S3
// store answering s3cond's re-signed requests with the documents real
// stores send (versitygw's and AWS's error bodies). buckets is backend.buckets.
func scriptedProxy(t *testing.T, buckets map[string]string, answer http.HandlerFunc) (proxyURL string, backendHost string) {
	t.Helper()
	return scriptedProxyServedBy(t, buckets, answer, httptest.NewServer)
}

// scriptedProxyServedBy is scriptedProxy with the proxy's front server
// started by serve.
func scriptedProxyServedBy(t *testing.T, buckets map[string]string, answer http.HandlerFunc,
	serve func(http.Handler) *httptest.Server) (proxyURL string, backendHost string) {
	t.Helper()
	store := httptest.NewServer(answer)
	t.Cleanup(store.Close)
	u, _ := url.Parse(store.URL)
	backend := &Backend{
		Name: "default", Endpoint: u, Buckets: buckets,
		Client: &http.Client{Transport: sigv4.NewResigner(backendhttp.NewSpliceTransport(backendhttp.NewBackendTransport()),
			credentials.NewStaticCredentialsProvider(backendKeyID, "backend-secret", ""), "us-east-1"),
			CheckRedirect: noRedirects.CheckRedirect}, // as internal/app builds it
	}
	p := New(Options{Auth: sigv4.NewVerifier(staticKeys{}, "us-east-1"), Access: staticKeys{}, Backend: backend, Log: zerolog.Nop()})
	front := serve(p)
	t.Cleanup(front.Close)
	return front.URL, u.Host
}

// signedDo sends a request signed with the test client key and returns the
// status, header and whole body.
func signedDo(t *testing.T, method, target string, body []byte) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(method, target, bytes.NewReader(body))
	signWithTestKey(t, req, body)
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// signWithTestKey signs req, whose body is body, with the test client key.
func signWithTestKey(t testing.TB, req *http.Request, body []byte) {
	t.Helper()
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	creds := aws.Credentials{AccessKeyID: testKeyID, SecretAccessKey: testSecret}
	testkit.Sign(t, req, creds, hash)
}

// noRedirects shows a client the redirect itself.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// versitygwSignatureMismatch is the body versitygw sends when it rejects
// a signature: it names the key ID and both canonical forms.
func versitygwSignatureMismatch(host string) string {
	return `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SignatureDoesNotMatch</Code>` +
		`<Message>The request signature we calculated does not match the signature you provided.</Message>` +
		`<AWSAccessKeyId>` + backendKeyID + `</AWSAccessKeyId>` +
		`<StringToSign>AWS4-HMAC-SHA256 20260101T000000Z</StringToSign>` +
		`<SignatureProvided>abcdef0123</SignatureProvided>` +
		`<CanonicalRequest>GET /proxytest/k host:` + host + `</CanonicalRequest>` +
		`<Resource>/proxytest/k</Resource><RequestId>BACKENDREQ1</RequestId><HostId>BACKENDHOST1</HostId></Error>`
}

func wantNoBackendDetails(t *testing.T, body, backendHost string) {
	t.Helper()
	for _, leak := range []string{backendKeyID, backendHost, "CanonicalRequest", "StringToSign", "SignatureProvided",
		"BACKENDREQ1", "BACKENDHOST1", "HostId", "backend-archive"} {
		if strings.Contains(body, leak) {
			t.Errorf("client sees %q in %s", leak, body)
		}
	}
}

func wantRequestID(t *testing.T, header http.Header, body string) {
	t.Helper()
	id := header.Get("X-Amz-Request-Id")
	if id == "" || !strings.Contains(body, "<RequestId>"+id+"</RequestId>") {
		t.Errorf("body does not carry the x-amz-request-id header %q: %s", id, body)
	}
}

func TestBackendAuthFailureIsS3condsInternalError(t *testing.T) {
	var host string
	proxyURL, backendHost := scriptedProxy(t, nil, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, versitygwSignatureMismatch(host))
	})
	host = backendHost
	// GET goes through SpliceTransport, POST (CreateMultipartUpload)
	// through net/http's transport.
	for method, target := range map[string]string{http.MethodGet: "/k", http.MethodPost: "/k?uploads"} {
		status, header, body := signedDo(t, method, proxyURL+"/"+bucketName+target, nil)
		if status != http.StatusInternalServerError || !strings.Contains(body, "<Code>InternalError</Code>") {
			t.Errorf("%s: status %d body %s; want 500 InternalError", method, status, body)
		}
		wantNoBackendDetails(t, body, backendHost)
		wantRequestID(t, header, body)
	}
}

func TestBackendAccessDeniedLosesItsDetails(t *testing.T) {
	proxyURL, backendHost := scriptedProxy(t, nil, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, `<Error><Code>AccessDenied</Code><Message>User `+backendKeyID+
			` is not allowed by bucket policy on http://`+r.Host+`</Message><RequestId>BACKENDREQ1</RequestId></Error>`)
	})
	status, header, body := signedDo(t, http.MethodGet, proxyURL+"/"+bucketName+"/k", nil)
	if status != http.StatusForbidden || !strings.Contains(body, "<Code>AccessDenied</Code>") {
		t.Fatalf("status %d body %s; want 403 AccessDenied", status, body)
	}
	wantNoBackendDetails(t, body, backendHost)
	wantRequestID(t, header, body)
}

func TestBackendErrorSpeaksOfClientNames(t *testing.T) {
	buckets := map[string]string{bucketName: "backend-archive"}
	proxyURL, backendHost := scriptedProxy(t, buckets, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusNotFound)
		_, _ = fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>`+
			`<Error><Code>NoSuchKey</Code><Message>No key k in backend-archive at %s.</Message>`+
			`<Key>k</Key><BucketName>backend-archive</BucketName><Resource>/backend-archive/k</Resource>`+
			`<Endpoint>%s</Endpoint><RequestId>BACKENDREQ1</RequestId><HostId>BACKENDHOST1</HostId></Error>`, r.Host, r.Host)
	})
	status, header, body := signedDo(t, http.MethodGet, proxyURL+"/"+bucketName+"/k", nil)
	if status != http.StatusNotFound || !strings.Contains(body, "<Code>NoSuchKey</Code>") {
		t.Fatalf("status %d body %s; want 404 NoSuchKey", status, body)
	}
	wantNoBackendDetails(t, body, backendHost)
	wantRequestID(t, header, body)
	for _, want := range []string{"<BucketName>" + bucketName + "</BucketName>", "<Resource>/" + bucketName + "/k</Resource>",
		"<Key>k</Key>", "No key k in " + bucketName + " at "} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %s: %s", want, body)
		}
	}
	if header.Get("Content-Length") != fmt.Sprint(len(body)) {
		t.Errorf("Content-Length %s for a body of %d", header.Get("Content-Length"), len(body))
	}
}

func TestBackendErrorOnHeadPassesWithoutBody(t *testing.T) {
	proxyURL, _ := scriptedProxy(t, nil, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
	})
	status, header, body := signedDo(t, http.MethodHead, proxyURL+"/"+bucketName+"/k", nil)
	if status != http.StatusNotFound || body != "" || header.Get("X-Amz-Request-Id") == "" {
		t.Fatalf("HEAD: status %d body %q", status, body)
	}
}

func TestOversizedBackendErrorIsBadGateway(t *testing.T) {
	proxyURL, backendHost := scriptedProxy(t, nil, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, "<Error><Code>InvalidRequest</Code><Message>"+r.Host+
			strings.Repeat("x", maxBackendDocument)+"</Message></Error>")
	})
	status, header, body := signedDo(t, http.MethodGet, proxyURL+"/"+bucketName+"/k", nil)
	if status != http.StatusBadGateway {
		t.Fatalf("status %d; want 502", status)
	}
	wantNoBackendDetails(t, body, backendHost)
	wantRequestID(t, header, body)
}

func TestNonXMLBackendErrorIsS3condsError(t *testing.T) {
	proxyURL, backendHost := scriptedProxy(t, nil, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, "<html>upstream "+r.Host+" overloaded</html><p>")
	})
	status, header, body := signedDo(t, http.MethodGet, proxyURL+"/"+bucketName+"/k", nil)
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "<Code>ServiceUnavailable</Code>") {
		t.Fatalf("status %d body %s; want 503 ServiceUnavailable", status, body)
	}
	wantNoBackendDetails(t, body, backendHost)
	wantRequestID(t, header, body)
}

func TestCompleteMultipartLocationNamesTheClientURL(t *testing.T) {
	buckets := map[string]string{bucketName: "backend-archive"}
	proxyURL, backendHost := scriptedProxy(t, buckets, func(w http.ResponseWriter, r *http.Request) {
		_, _ = fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>`+
			`<CompleteMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`+
			`<Location>http://%s/backend-archive/a%%20b</Location><Bucket>backend-archive</Bucket>`+
			`<Key>a b</Key><ETag>&#34;abc-2&#34;</ETag></CompleteMultipartUploadResult>`, r.Host)
	})
	complete := []byte(`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"x"</ETag></Part></CompleteMultipartUpload>`)
	status, _, body := signedDo(t, http.MethodPost, proxyURL+"/"+bucketName+"/a%20b?uploadId=u1", complete)
	if status != http.StatusOK {
		t.Fatalf("status %d body %s", status, body)
	}
	wantNoBackendDetails(t, body, backendHost)
	for _, want := range []string{"<Location>" + proxyURL + "/" + bucketName + "/a%20b</Location>",
		"<Bucket>" + bucketName + "</Bucket>", "<Key>a b</Key>", `<ETag>&#34;abc-2&#34;</ETag>`,
		`xmlns="http://s3.amazonaws.com/doc/2006-03-01/"`} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %s: %s", want, body)
		}
	}
}

func TestReplaceWordKeepsLongerNames(t *testing.T) {
	got := replaceWord("bucket b1 and b1-x and b1.y and b1.", "b1", "client")
	if want := "bucket client and b1-x and b1.y and client."; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// A backend that breaks off a chunked listing must not give the client a
// clean end: the client's response is aborted too.
func TestBackendFailingMidBodyAbortsTheResponse(t *testing.T) {
	proxyURL, _ := scriptedProxy(t, nil, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "<ListBucketResult><Contents><Key>a</Key></Contents>")
		w.(http.Flusher).Flush()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close() // mid-chunk: the listing is cut
		}
	})
	// A listing over SpliceTransport; a CreateMultipartUpload over
	// net/http's transport (the backend's answer cut the same way).
	for method, target := range map[string]string{http.MethodGet: "?list-type=2", http.MethodPost: "/k?uploads"} {
		req, _ := http.NewRequest(method, proxyURL+"/"+bucketName+target, nil)
		creds := aws.Credentials{AccessKeyID: testKeyID, SecretAccessKey: testSecret}
		testkit.Sign(t, req, creds, emptySHA256)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			continue // the abort came before the head: also not a clean answer
		}
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil {
			t.Errorf("%s: the client read a clean end of a listing the backend cut off", method)
		}
	}
}

func TestLocationHeaderNamesTheClientBucketAndHost(t *testing.T) {
	buckets := map[string]string{bucketName: "backend-archive"}
	proxyURL, _ := scriptedProxy(t, buckets, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "/backend-archive")
		if r.Method == http.MethodPost {
			w.Header().Set("Location", "http://"+r.Host+"/backend-archive/k")
			w.WriteHeader(http.StatusTemporaryRedirect)
		}
	})
	_, header, _ := signedDo(t, http.MethodPut, proxyURL+"/"+bucketName, nil)
	if got := header.Get("Location"); got != "/"+bucketName {
		t.Errorf("CreateBucket Location %q, want /%s", got, bucketName)
	}
	status, header, body := signedDo(t, http.MethodPost, proxyURL+"/"+bucketName+"/k?uploads", nil)
	if got := header.Get("Location"); status != http.StatusTemporaryRedirect || got != proxyURL+"/"+bucketName+"/k" {
		t.Errorf("redirect %d Location %q names the backend (body %s)", status, got, body)
	}

}

func TestBackendAccessDeniedKeepsAHarmlessReason(t *testing.T) {
	const reason = "Access Denied because object protected by object lock."
	proxyURL, _ := scriptedProxy(t, nil, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, `<Error><Code>AccessDenied</Code><Message>`+reason+`</Message><RequestId>BACKENDREQ1</RequestId></Error>`)
	})
	status, header, body := signedDo(t, http.MethodDelete, proxyURL+"/"+bucketName+"/locked", nil)
	if status != http.StatusForbidden || !strings.Contains(body, "<Message>"+reason+"</Message>") {
		t.Fatalf("status %d body %s; want 403 with the store's reason", status, body)
	}
	wantRequestID(t, header, body)
}

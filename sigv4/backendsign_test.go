package sigv4

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/s3cond/s3cond/internal/testkit"
)

// sdkSigned is how the resigner signed before backendsign.go: with
// aws-sdk-go-v2's general signer, on a clone, with the path in S3's
// encoding and the query canonicalised for it. It is the reference the
// hand-built signature must equal, header for header.
func sdkSigned(t *testing.T, req *http.Request, creds aws.Credentials, region string, now time.Time) http.Header {
	t.Helper()
	out := req.Clone(context.Background())
	out.Header.Del(headerAuthorization)
	payloadHash := out.Header.Get(headerContentSHA256)
	if payloadHash == "" {
		payloadHash = unsignedPayload
		if (out.Body == nil || out.Body == http.NoBody) && out.ContentLength == 0 {
			payloadHash = EmptyPayloadHash
		}
		out.Header.Set(headerContentSHA256, payloadHash)
	}
	if encoded := uriEncode(out.URL.Path, false); out.URL.EscapedPath() != encoded {
		out.URL.RawPath = encoded
	}
	out.URL.RawQuery = canonicalQuery(out.URL.RawQuery, false)
	signer := testkit.S3Signer()
	if err := signer.SignHTTP(context.Background(), creds, out, payloadHash, serviceS3, region, now); err != nil {
		t.Fatal(err)
	}
	return out.Header
}

// TestBackendSignatureMatchesSDK signs requests of many shapes with the
// resigner and with the SDK's signer at the same instant: the headers sent
// must be the same, Authorization byte for byte, so every backend that
// accepted the SDK's signatures accepts these.
func TestBackendSignatureMatchesSDK(t *testing.T) {
	now := time.Date(2026, 12, 1, 16, 45, 7, 0, time.UTC)
	cases := []struct {
		name, method, base, key, rawQuery string
		length                            int64
		header                            http.Header
		token                             string
	}{
		{name: "bare GET", method: "GET", base: "http://127.0.0.1:9000", key: "k"},
		{name: "default port dropped", method: "GET", base: "http://store.example:80", key: "k"},
		{name: "odd key and query", method: "GET", base: "http://h:1", key: "a+b=c&d/ünï cødé/%2F", rawQuery: "z=1&a=%7e&b=x+y&c&d=%2f"},
		{name: "PUT with body and metadata", method: "PUT", base: "http://h:1", key: "obj", length: 4096, header: http.Header{
			"Content-Type":             {"application/octet-stream"},
			"X-Amz-Meta-Note":          {"  spaced   value "},
			"X-Amz-Meta-Two":           {"a", "b"},
			"Content-Md5":              {"1B2M2Y8AsgTpgAmY7PhCfg=="},
			"X-Amz-Content-Sha256":     {strings.Repeat("ab", 32)},
			"User-Agent":               {"not signed"},
			"Expect":                   {"100-continue"},
			"X-Amzn-Trace-Id":          {"not signed"},
			"X-Amz-Checksum-Crc32":     {"AAAAAA=="},
			"X-Amz-Copy-Source":        {"/b/k?versionId=1"},
			"If-None-Match":            {"*"},
			"X-Amz-Storage-Class":      {"STANDARD"},
			"Range":                    {"bytes=0-1"},
			"X-Amz-Server-Side-Encryp": {"AES256"},
		}},
		{name: "PUT of nothing signs no length", method: "PUT", base: "http://h:1", key: "empty", length: 0},
		{name: "session token", method: "DELETE", base: "http://h:1", key: "k", token: "session/token=="},
		{name: "bucket root", method: "GET", base: "http://h:1", key: "", rawQuery: "list-type=2&prefix=a%20b"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			creds := aws.Credentials{AccessKeyID: backendAccessKey, SecretAccessKey: backendSecret, SessionToken: tc.token}
			var body *closeRecorder
			if tc.length > 0 {
				body = &closeRecorder{Reader: strings.NewReader(strings.Repeat("x", int(tc.length)))}
			}
			var r *http.Request
			if body != nil {
				r = outboundRequest(t, tc.base, tc.method, tc.key, tc.rawQuery, body, tc.length)
			} else {
				r = outboundRequest(t, tc.base, tc.method, tc.key, tc.rawQuery, nil, 0)
			}
			for name, values := range tc.header {
				r.Header[name] = values
			}
			r.Header.Set("Authorization", "client's, dropped")
			want := sdkSigned(t, r, creds, backendRegion, now)

			next := &capturingTransport{}
			rt := NewResigner(next, credentials.NewStaticCredentialsProvider(creds.AccessKeyID, creds.SecretAccessKey, creds.SessionToken), backendRegion).(*resigner)
			rt.clock.now = func() time.Time { return now }
			resp, err := rt.RoundTrip(r)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			got := next.got.Header
			for _, name := range []string{headerAuthorization, headerAmzDate, headerContentSHA256, headerSecurityToken} {
				if got.Get(name) != want.Get(name) {
					t.Errorf("%s:\n got %q\nwant %q", name, got.Get(name), want.Get(name))
				}
			}
			if len(got) != len(want) {
				t.Errorf("headers sent: %v, the SDK's: %v", got, want)
			}
		})
	}
}

// TestBackendSignatureIgnoresHeaderCase merges header names that differ
// only in case, whatever order the map yields them in.
func TestBackendSignatureIgnoresHeaderCase(t *testing.T) {
	next := &capturingTransport{}
	rt := NewResigner(next, backendCredentials(), backendRegion).(*resigner)
	rt.clock.now = func() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) }
	var first string
	for range 20 {
		r := outboundRequest(t, "http://h:1", "GET", "k", "", nil, 0)
		r.Header["X-Amz-Meta-A"] = []string{"1"}
		r.Header["x-amz-meta-a"] = []string{"2"}
		if _, err := rt.RoundTrip(r); err != nil {
			t.Fatal(err)
		}
		auth := next.got.Header.Get(headerAuthorization)
		if !strings.Contains(auth, "SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-meta-a,") {
			t.Fatalf("Authorization %q", auth)
		}
		if first == "" {
			first = auth
		} else if auth != first {
			t.Fatalf("signature depends on map order: %q then %q", first, auth)
		}
	}
}

// TestSigningKeySignsAsAFreshHMAC checks that a pooled, Reset HMAC state
// gives what a fresh crypto/hmac gives, used again and from several
// goroutines at once (a state must never carry one signature into the next).
func TestSigningKeySignsAsAFreshHMAC(t *testing.T) {
	raw := deriveSigningKey("secret", "20260314", "eu-west-1", "s3")
	key := newSigningKey(raw)
	data := []string{"", "data", strings.Repeat("d", 1000), "data"}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				for _, d := range data {
					got := key.sign(nil, []byte(d))
					if want := macSHA256(raw[:], d); string(got) != string(want) {
						t.Errorf("data %d bytes: %x, want %x", len(d), got, want)
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkResign is the re-signing of one forwarded GET, and
// BenchmarkResignSDK the same with aws-sdk-go-v2's general signer, as the
// resigner did before backendsign.go: the two side by side in one run.
func BenchmarkResign(b *testing.B) {
	rt := NewResigner(&capturingTransport{}, backendCredentials(), backendRegion)
	r := benchOutbound(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rt.RoundTrip(r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkResignSDK(b *testing.B) {
	creds := aws.Credentials{AccessKeyID: backendAccessKey, SecretAccessKey: backendSecret}
	signer := testkit.S3Signer()
	r := benchOutbound(b)
	b.ReportAllocs()
	for b.Loop() {
		// The resigner's RoundTrip before backendsign.go, minus the
		// credentials lookup.
		out := r.Clone(r.Context())
		out.Header.Del(headerAuthorization)
		out.Header.Set(headerContentSHA256, EmptyPayloadHash)
		out.URL.RawQuery = canonicalQuery(out.URL.RawQuery, false)
		if err := signer.SignHTTP(r.Context(), creds, out, EmptyPayloadHash, serviceS3, backendRegion, time.Now().UTC()); err != nil {
			b.Fatal(err)
		}
	}
}

func benchOutbound(b testing.TB) *http.Request {
	r, err := http.NewRequest(http.MethodGet, "http://127.0.0.1:9000/bucket/some/key.txt", nil)
	if err != nil {
		b.Fatal(err)
	}
	r.Header.Set("User-Agent", "aws-sdk-go-v2/1.0")
	r.Header.Set("Range", "bytes=0-4095")
	return r
}

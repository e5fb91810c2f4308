package sigv4

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/s3cond/s3cond/internal/testkit"
	"github.com/s3cond/s3cond/s3err"
)

const (
	testAccessKey = "AKIDCLIENT"
	testSecret    = "client/secret+key"
	testRegion    = "eu-west-1"
)

var testNow = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

func testVerifier() *Verifier {
	v := NewVerifier(staticCredentials{testAccessKey: testSecret}, testRegion)
	v.Now = func() time.Time { return testNow }
	return v
}

// sdkSigner is aws-sdk-go-v2's signer configured as its S3 client uses it:
// it stands for a real S3 client signing a request.
var sdkSigner = testkit.S3Signer()

type signOptions struct {
	accessKey, secret, region, service string
	at                                 time.Time
	payloadHash                        string
	sessionToken                       string      // signed as a client with temporary credentials does
	header                             http.Header // further headers, signed
}

func (o signOptions) withDefaults() signOptions {
	if o.accessKey == "" {
		o.accessKey = testAccessKey
	}
	if o.secret == "" {
		o.secret = testSecret
	}
	if o.region == "" {
		o.region = testRegion
	}
	if o.service == "" {
		o.service = "s3"
	}
	if o.at.IsZero() {
		o.at = testNow
	}
	if o.payloadHash == "" {
		o.payloadHash = unsignedPayload
	}
	return o
}

// signedRequest returns a server-side request (as a handler receives it)
// signed in the Authorization header by the SDK signer.
func signedRequest(t testing.TB, method, target, body string, o signOptions) *http.Request {
	t.Helper()
	o = o.withDefaults()
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	r.Header.Set(headerContentSHA256, o.payloadHash)
	for name, values := range o.header {
		r.Header[name] = values
	}
	creds := aws.Credentials{AccessKeyID: o.accessKey, SecretAccessKey: o.secret, SessionToken: o.sessionToken}
	rawQuery := r.URL.RawQuery
	if err := sdkSigner.SignHTTP(context.Background(), creds, r, o.payloadHash, o.service, o.region, o.at); err != nil {
		t.Fatal(err)
	}
	r.URL.RawQuery = rawQuery // what the client put on the wire
	return r
}

// presignedRequest returns a server-side request for a URL presigned by the SDK.
func presignedRequest(t testing.TB, method, target string, expires time.Duration, o signOptions) *http.Request {
	t.Helper()
	o = o.withDefaults()
	r := httptest.NewRequest(method, target, nil)
	q := r.URL.Query()
	q.Set(queryExpires, strings.TrimSuffix((expires/time.Second).String(), "ns"))
	q.Set(queryExpires, strconv.Itoa(int(expires/time.Second)))
	r.URL.RawQuery = q.Encode()
	creds := aws.Credentials{AccessKeyID: o.accessKey, SecretAccessKey: o.secret, SessionToken: o.sessionToken}
	signedURL, _, err := sdkSigner.PresignHTTP(context.Background(), creds, r, unsignedPayload, o.service, o.region, o.at)
	if err != nil {
		t.Fatal(err)
	}
	out := httptest.NewRequest(method, signedURL, nil)
	return out
}

func verifyCode(t *testing.T, v *Verifier, r *http.Request, code s3err.Code, status int, message string) *s3err.Error {
	t.Helper()
	got, err := v.Verify(r)
	if err == nil {
		t.Fatalf("Verify succeeded (%+v), want %s", got, code)
	}
	var e *s3err.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %T %v is not *s3err.Error", err, err)
	}
	if e.Code != code || e.Status() != status {
		t.Fatalf("error %s (%d) %q, want %s (%d)", e.Code, e.Status(), e.Message, code, status)
	}
	if message != "" && e.Message != message {
		t.Fatalf("message %q, want %q", e.Message, message)
	}
	for _, f := range e.Extra {
		if strings.Contains(f.Value, testSecret) {
			t.Fatalf("error element %s reveals the secret", f.Name)
		}
	}
	return e
}

func extra(e *s3err.Error, name string) (string, bool) {
	for _, f := range e.Extra {
		if f.Name == name {
			return f.Value, true
		}
	}
	return "", false
}

func TestVerifyAccepts(t *testing.T) {
	t.Run("header auth, unsigned payload", func(t *testing.T) {
		r := signedRequest(t, "PUT", "/bucket/key?uploadId=x&partNumber=1", "hello", signOptions{})
		got, err := testVerifier().Verify(r)
		if err != nil {
			t.Fatal(err)
		}
		if got.AccessKeyID != testAccessKey || got.Anonymous || got.Presigned || got.Mode != PayloadUnsigned || got.Body == nil {
			t.Fatalf("%+v", got)
		}
		if b, err := io.ReadAll(got.Body); err != nil || string(b) != "hello" {
			t.Fatalf("body %q, %v", b, err)
		}
	})
	t.Run("header auth, hex payload verified on read", func(t *testing.T) {
		const body = "payload"
		r := signedRequest(t, "PUT", "/bucket/key", body, signOptions{payloadHash: sha256Hex([]byte(body))})
		got, err := testVerifier().Verify(r)
		if err != nil {
			t.Fatal(err)
		}
		if got.Mode != PayloadSHA256 {
			t.Fatalf("mode %v", got.Mode)
		}
		if b, err := io.ReadAll(got.Body); err != nil || string(b) != body {
			t.Fatalf("body %q, %v", b, err)
		}
	})
	t.Run("header auth, hex payload that does not match fails on read", func(t *testing.T) {
		r := signedRequest(t, "PUT", "/bucket/key", "other", signOptions{payloadHash: sha256Hex([]byte("payload"))})
		got, err := testVerifier().Verify(r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadAll(got.Body); !s3err.Is(err, s3err.XAmzContentSHA256Mismatch) {
			t.Fatalf("read error %v, want XAmzContentSHA256Mismatch", err)
		}
	})
	t.Run("components reordered without spaces", func(t *testing.T) {
		r := signedRequest(t, "GET", "/bucket/key", "", signOptions{})
		f, err := parseAuthorization(r.Header.Get("Authorization"))
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Signature="+f.signature+",SignedHeaders="+f.signedHeaders+
			",Credential="+testAccessKey+"/"+f.credential.scope())
		if _, err := testVerifier().Verify(r); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("any region when none is configured", func(t *testing.T) {
		v := testVerifier()
		v.Region = ""
		if _, err := v.Verify(signedRequest(t, "GET", "/b/k", "", signOptions{region: "ap-south-2"})); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("within skew", func(t *testing.T) {
		r := signedRequest(t, "GET", "/b/k", "", signOptions{at: testNow.Add(-14 * time.Minute)})
		if _, err := testVerifier().Verify(r); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("path signed as sent without re-encoding", func(t *testing.T) {
		// Go's EscapedPath leaves '+' and '!' raw; a client signing the URL
		// as Go spells it signs "/b/a+b!" where S3's rule gives "/b/a%2Bb%21".
		r := signedRequest(t, "GET", "/b/a+b!", "", signOptions{})
		if _, err := testVerifier().Verify(r); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("presigned", func(t *testing.T) {
		r := presignedRequest(t, "GET", "/bucket/dir/my%20key?versionId=3", time.Hour, signOptions{at: testNow.Add(-30 * time.Minute)})
		got, err := testVerifier().Verify(r)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Presigned || got.Mode != PayloadUnsigned || got.AccessKeyID != testAccessKey {
			t.Fatalf("%+v", got)
		}
	})
	t.Run("anonymous", func(t *testing.T) {
		r := httptest.NewRequest("GET", "/bucket/key", nil)
		got, err := testVerifier().Verify(r)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Anonymous || got.AccessKeyID != "" || got.Body == nil {
			t.Fatalf("%+v", got)
		}
	})
}

func TestVerifyErrors(t *testing.T) {
	const malformed = "The authorization header is malformed; "
	// Credential scope pieces for hand-made Authorization headers.
	scope := testNow.Format(scopeDateLayout) + "/" + testRegion + "/s3/aws4_request"
	withAuthorization := func(value string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("Authorization", value) }
	}
	replaceInAuthorization := func(old, new string) func(*http.Request) {
		return func(r *http.Request) {
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), old, new, 1))
		}
	}
	cases := []struct {
		name    string
		sign    signOptions
		mutate  func(*http.Request)
		code    s3err.Code
		status  int
		message string
		extras  map[string]string
	}{
		{name: "unknown access key", sign: signOptions{accessKey: "AKIDNOBODY"},
			code: s3err.InvalidAccessKeyID, status: 403, extras: map[string]string{"AWSAccessKeyId": "AKIDNOBODY"}},
		{name: "wrong secret", sign: signOptions{secret: "not-the-secret"},
			code: s3err.SignatureDoesNotMatch, status: 403, extras: map[string]string{"AWSAccessKeyId": testAccessKey}},
		{name: "signed header changed", mutate: func(r *http.Request) { r.Header.Set(headerContentSHA256, sha256Hex(nil)) },
			code: s3err.SignatureDoesNotMatch, status: 403},
		{name: "query changed", mutate: func(r *http.Request) { r.URL.RawQuery = "acl" },
			code: s3err.SignatureDoesNotMatch, status: 403},
		{name: "signed header missing", mutate: func(r *http.Request) {
			r.Header.Del("X-Amz-Date")
			r.Header.Set("Date", testNow.Format(http.TimeFormat))
		},
			code: s3err.SignatureDoesNotMatch, status: 403, extras: map[string]string{"HeadersNotPresent": "x-amz-date"}},
		{name: "clock behind", sign: signOptions{at: testNow.Add(-16 * time.Minute)},
			code: s3err.RequestTimeTooSkewed, status: 403,
			extras: map[string]string{"RequestTime": testNow.Add(-16 * time.Minute).Format(amzDateLayout), "MaxAllowedSkewMilliseconds": "900000"}},
		{name: "clock ahead", sign: signOptions{at: testNow.Add(16 * time.Minute)},
			code: s3err.RequestTimeTooSkewed, status: 403},
		{name: "no date", mutate: func(r *http.Request) { r.Header.Del("X-Amz-Date") },
			code: s3err.AccessDenied, status: 403, message: "AWS authentication requires a valid Date or x-amz-date header"},
		{name: "unparseable date", mutate: func(r *http.Request) { r.Header.Set("X-Amz-Date", "yesterday") },
			code: s3err.AccessDenied, status: 403},
		{name: "missing signature component", mutate: replaceInAuthorization(", Signature=", ", Sig="),
			code: s3err.AuthorizationHeaderMalformed, status: 400},
		{name: "only two components", mutate: withAuthorization("AWS4-HMAC-SHA256 Credential=" + testAccessKey + "/" + scope + ", SignedHeaders=host"),
			code: s3err.AuthorizationHeaderMalformed, status: 400,
			message: malformed + "the authorization header requires three components: Credential, SignedHeaders, and Signature."},
		{name: "short credential", mutate: replaceInAuthorization("/"+testRegion+"/", "/"),
			code: s3err.AuthorizationHeaderMalformed, status: 400, message: malformed + credentialFormatHint},
		{name: "wrong region", sign: signOptions{region: "us-west-2"},
			code: s3err.AuthorizationHeaderMalformed, status: 400,
			message: malformed + "the region 'us-west-2' is wrong; expecting 'eu-west-1'", extras: map[string]string{"Region": testRegion}},
		{name: "wrong service", sign: signOptions{service: "ec2"},
			code: s3err.AuthorizationHeaderMalformed, status: 400, message: malformed + `incorrect service "ec2". This endpoint belongs to "s3".`},
		{name: "wrong terminator", mutate: replaceInAuthorization("/aws4_request", "/aws4_reques"),
			code: s3err.AuthorizationHeaderMalformed, status: 400, message: malformed + `incorrect terminal "aws4_reques". This endpoint uses "aws4_request".`},
		{name: "scope date differs from x-amz-date", mutate: replaceInAuthorization("/"+testNow.Format(scopeDateLayout)+"/", "/20260313/"),
			code: s3err.AuthorizationHeaderMalformed, status: 400,
			message: malformed + "Invalid credential date. Date is not the same as X-Amz-Date."},
		{name: "scope date not yyyyMMdd", mutate: replaceInAuthorization("/"+testNow.Format(scopeDateLayout)+"/", "/3223423234/"),
			code: s3err.AuthorizationHeaderMalformed, status: 400,
			message: malformed + `incorrect date format "3223423234". This date in the credential must be in the format "yyyyMMdd".`},
		// S3 checks the scope's shape before its date: a wrong terminator
		// is named even when the date is wrong too.
		{name: "wrong terminator and date", mutate: func(r *http.Request) {
			replaceInAuthorization("/aws4_request", "/aws_request")(r)
			replaceInAuthorization("/"+testNow.Format(scopeDateLayout)+"/", "/32234/")(r)
		}, code: s3err.AuthorizationHeaderMalformed, status: 400, message: malformed + `incorrect terminal "aws_request". This endpoint uses "aws4_request".`},
		{name: "credential component missing", mutate: replaceInAuthorization("Credential=", "missing_creds="),
			code: s3err.AuthorizationHeaderMalformed, status: 400, message: malformed + "missing Credential."},
		{name: "signed headers component missing", mutate: replaceInAuthorization("SignedHeaders=", "missing="),
			code: s3err.AuthorizationHeaderMalformed, status: 400, message: malformed + "missing SignedHeaders."},
		{name: "signature component missing", mutate: replaceInAuthorization("Signature=", "missing="),
			code: s3err.AuthorizationHeaderMalformed, status: 400, message: malformed + "missing Signature."},
		{name: "component without value", mutate: replaceInAuthorization("Signature=", "Signature"),
			code: s3err.AuthorizationHeaderMalformed, status: 400},
		{name: "authorization without a space", mutate: withAuthorization("invalid_header"),
			code: s3err.InvalidArgument, status: 400, message: "Authorization header is invalid -- one and only one ' ' (space) required.",
			extras: map[string]string{"ArgumentName": "Authorization", "ArgumentValue": "invalid_header"}},
		{name: "unknown authorization type", mutate: replaceInAuthorization("AWS4-HMAC-SHA256 ", "AWS2-HMAC-SHA1 "),
			code: s3err.InvalidArgument, status: 400, message: "Unsupported Authorization Type",
			extras: map[string]string{"ArgumentName": "Authorization", "ArgumentValue": "AWS2-HMAC-SHA1"}},
		{name: "missing x-amz-content-sha256", mutate: func(r *http.Request) { r.Header.Del(headerContentSHA256) },
			code: s3err.InvalidRequest, status: 400, message: "Missing required header for this request: x-amz-content-sha256"},
		{name: "invalid x-amz-content-sha256", sign: signOptions{payloadHash: "abc123"},
			code: s3err.InvalidArgument, status: 400, extras: map[string]string{"ArgumentName": "x-amz-content-sha256", "ArgumentValue": "abc123"}},
		{name: "host not signed", mutate: replaceInAuthorization("SignedHeaders=host;", "SignedHeaders="),
			code: s3err.AccessDenied, status: 403, extras: map[string]string{"HeadersNotSigned": "host"}},
		{name: "sigv2", mutate: withAuthorization("AWS " + testAccessKey + ":frJIUN8DYpKDtOLCwo//yllqDzg="),
			code: s3err.InvalidRequest, status: 400, message: "The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256."},
		{name: "sigv4a", mutate: replaceInAuthorization("AWS4-HMAC-SHA256 ", "AWS4-ECDSA-P256-SHA256 "),
			code: s3err.InvalidArgument, status: 400, message: "Unsupported Authorization Type"},
		{name: "header and presigned query", mutate: func(r *http.Request) { r.URL.RawQuery = "X-Amz-Algorithm=AWS4-HMAC-SHA256" },
			code: s3err.InvalidArgument, status: 400},
		{name: "sigv2 presigned query", mutate: func(r *http.Request) {
			r.Header.Del("Authorization")
			r.URL.RawQuery = "AWSAccessKeyId=" + testAccessKey + "&Expires=1&Signature=x"
		}, code: s3err.InvalidRequest, status: 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := signedRequest(t, "PUT", "/bucket/key", "", tc.sign)
			if tc.mutate != nil {
				tc.mutate(r)
			}
			e := verifyCode(t, testVerifier(), r, tc.code, tc.status, tc.message)
			for name, want := range tc.extras {
				if got, ok := extra(e, name); !ok || got != want {
					t.Errorf("element %s = %q (present %v), want %q", name, got, ok, want)
				}
			}
		})
	}
}

func TestSignatureDoesNotMatchShowsCanonicalRequest(t *testing.T) {
	r := signedRequest(t, "GET", "/bucket/some%20key?list-type=2", "", signOptions{secret: "wrong"})
	e := verifyCode(t, testVerifier(), r, s3err.SignatureDoesNotMatch, 403, "")
	creq, _ := extra(e, "CanonicalRequest")
	if !strings.HasPrefix(creq, "GET\n/bucket/some%20key\nlist-type=2\nhost:example.com\n") {
		t.Fatalf("CanonicalRequest = %q", creq)
	}
	sts, _ := extra(e, "StringToSign")
	if !strings.HasPrefix(sts, "AWS4-HMAC-SHA256\n"+testNow.Format(amzDateLayout)+"\n") {
		t.Fatalf("StringToSign = %q", sts)
	}
	if b, _ := extra(e, "StringToSignBytes"); !strings.HasPrefix(b, "41 57 53 34") {
		t.Fatalf("StringToSignBytes = %q", b)
	}
}

func TestPresignedErrors(t *testing.T) {
	presigned := func(t *testing.T, expires time.Duration, o signOptions) *http.Request {
		return presignedRequest(t, "GET", "/bucket/key", expires, o)
	}
	setQuery := func(name, value string) func(*http.Request) {
		return func(r *http.Request) {
			q := r.URL.Query()
			if value == "" {
				q.Del(name)
			} else {
				q.Set(name, value)
			}
			r.URL.RawQuery = q.Encode()
		}
	}
	cases := []struct {
		name    string
		expires time.Duration
		sign    signOptions
		mutate  func(*http.Request)
		code    s3err.Code
		status  int
		message string
	}{
		{name: "expired", expires: time.Hour, sign: signOptions{at: testNow.Add(-61 * time.Minute)},
			code: s3err.AccessDenied, status: 403, message: "Request has expired"},
		{name: "not valid yet", expires: time.Hour, sign: signOptions{at: testNow.Add(16 * time.Minute)},
			code: s3err.AccessDenied, status: 403, message: "Request is not valid yet"},
		{name: "expires zero", expires: time.Hour, mutate: setQuery(queryExpires, "0"),
			code: s3err.AuthorizationQueryParametersError, status: 400},
		{name: "expires over a week", expires: time.Hour, mutate: setQuery(queryExpires, "604801"),
			code: s3err.AuthorizationQueryParametersError, status: 400, message: "X-Amz-Expires must be less than a week (in seconds); that is, the given X-Amz-Expires must be less than 604800 seconds"},
		{name: "expires negative", expires: time.Hour, mutate: setQuery(queryExpires, "-5"),
			code: s3err.AuthorizationQueryParametersError, status: 400, message: "X-Amz-Expires must be non-negative"},
		{name: "expires not a number", expires: time.Hour, mutate: setQuery(queryExpires, "soon"),
			code: s3err.AuthorizationQueryParametersError, status: 400},
		{name: "missing signature", expires: time.Hour, mutate: setQuery(querySignature, ""),
			code: s3err.AuthorizationQueryParametersError, status: 400},
		{name: "other algorithm", expires: time.Hour, mutate: setQuery(queryAlgorithm, "AWS4-ECDSA-P256-SHA256"),
			code: s3err.AuthorizationQueryParametersError, status: 400},
		{name: "bad date", expires: time.Hour, mutate: setQuery(queryDate, "2026-03-14"),
			code: s3err.AuthorizationQueryParametersError, status: 400},
		{name: "wrong region", expires: time.Hour, sign: signOptions{region: "us-east-2"},
			code: s3err.AuthorizationQueryParametersError, status: 400,
			message: "Error parsing the X-Amz-Credential parameter; the region 'us-east-2' is wrong; expecting 'eu-west-1'"},
		{name: "unknown key", expires: time.Hour, sign: signOptions{accessKey: "AKIDNOBODY"},
			code: s3err.InvalidAccessKeyID, status: 403},
		{name: "wrong secret", expires: time.Hour, sign: signOptions{secret: "nope"},
			code: s3err.SignatureDoesNotMatch, status: 403},
		{name: "expiry extended after signing", expires: time.Hour, mutate: setQuery(queryExpires, "7200"),
			code: s3err.SignatureDoesNotMatch, status: 403},
		{name: "host not signed", expires: time.Hour, mutate: setQuery(querySignedHeaders, "x-amz-date"),
			code: s3err.AccessDenied, status: 403},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := presigned(t, tc.expires, tc.sign)
			if tc.mutate != nil {
				tc.mutate(r)
			}
			verifyCode(t, testVerifier(), r, tc.code, tc.status, tc.message)
		})
	}
}

func TestSigningKeyCache(t *testing.T) {
	var c signingKeyCache
	id := signingKeyID{"AK", "secret", "20260314", "eu-west-1", "s3"}
	want := deriveSigningKey("secret", "20260314", "eu-west-1", "s3")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if c.get(id).bytes != want {
					t.Error("cached key differs from derived key")
					return
				}
			}
		})
	}
	wg.Wait()
	rotated := id
	rotated.secret = "rotated"
	if c.get(rotated).bytes == want {
		t.Fatal("a rotated secret reused the old key")
	}
	for i := range 3 * maxCachedSigningKeys {
		id.date = strconv.Itoa(i)
		c.get(id)
		if n := c.len(); n > maxCachedSigningKeys {
			t.Fatalf("cache holds %d keys, bound is %d", n, maxCachedSigningKeys)
		}
	}
}

func TestAuthParams(t *testing.T) {
	for _, name := range []string{"authorization", "X-AMZ-DATE", "x-amz-content-sha256", "X-Amz-Security-Token", "x-amz-decoded-content-length", "x-amz-trailer"} {
		if !IsAuthHeader(name) {
			t.Errorf("IsAuthHeader(%q) = false", name)
		}
	}
	for _, name := range []string{"Content-Length", "x-amz-meta-a", "x-amz-checksum-crc32", "Content-MD5", "If-Match", "Date"} {
		if IsAuthHeader(name) {
			t.Errorf("IsAuthHeader(%q) = true", name)
		}
	}
	// Every parameter a presigned URL from the SDK carries must be listed.
	r := presignedRequest(t, "GET", "/b/k?versionId=1", time.Hour, signOptions{})
	q := r.URL.Query()
	for _, name := range AuthQueryParams {
		q.Del(name)
	}
	if len(q) != 1 || q.Get("versionId") != "1" {
		t.Fatalf("after removing AuthQueryParams the query is %v", q)
	}
}

func TestUnsignedAmzHeadersAreRefused(t *testing.T) {
	for _, c := range []struct {
		header string
		refuse bool
	}{
		{"X-Amz-Meta-Owner", true},
		{"X-Amz-Copy-Source", true},
		{"X-Amz-Acl", true},
		{"X-Amz-Checksum-Crc32", false},
		{"X-Amz-User-Agent", false},
	} {
		r := signedRequest(t, "PUT", "/bucket/key", "", signOptions{payloadHash: EmptyPayloadHash})
		r.Header.Set(c.header, "added after signing")
		_, err := testVerifier().Verify(r)
		refused := s3err.Is(err, s3err.AccessDenied)
		if refused != c.refuse {
			t.Errorf("%s added unsigned: err %v, want refused=%v", c.header, err, c.refuse)
		}
		if refused && !strings.Contains(string(s3err.As(err).XML("/", "R")), strings.ToLower(c.header)) {
			t.Errorf("%s: HeadersNotSigned does not name it", c.header)
		}
	}
}

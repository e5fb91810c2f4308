package sigv4

import (
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The AWS SigV4 test suites, both editions, in testdata/ (see testdata/README.md).
const (
	vectorsDir      = "testdata"
	suiteDir        = vectorsDir + "/aws-sig-v4-test-suite"
	awsCAuthDir     = vectorsDir + "/aws-c-auth/v4"
	vectorAccessKey = "AKIDEXAMPLE"
	vectorSecret    = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
	vectorRegion    = "us-east-1"
	vectorService   = "service"
)

var vectorTime = time.Date(2015, 8, 30, 12, 36, 0, 0, time.UTC)

// pathNormalizingVectors expect RFC 3986 dot-segment removal or duplicate
// slash collapsing in the canonical URI. S3 does neither ("you do not
// normalize URI paths for requests to Amazon S3", normalize-path.txt), so
// these canonical requests are not S3's; their *-unnormalized twins in the
// aws-c-auth edition run instead. TestPathNormalizingVectorsDifferFromS3
// proves each listed vector really disagrees with S3's rule.
var pathNormalizingVectors = map[string]bool{
	"normalize-path/get-relative":            true,
	"normalize-path/get-relative-relative":   true,
	"normalize-path/get-slash":               true,
	"normalize-path/get-slash-dot-slash":     true,
	"normalize-path/get-slash-pointless-dot": true,
	"normalize-path/get-slashes":             true,
	"get-relative-normalized":                true,
	"get-relative-relative-normalized":       true,
	"get-slash-dot-slash-normalized":         true,
	"get-slash-normalized":                   true,
	"get-slash-pointless-dot-normalized":     true,
	"get-slashes-normalized":                 true,
}

// nonS3Vectors sign requests S3 never sees in that form:
//   - the 2015 edition's get-header-value-multiline expects folded header lines
//     to join with ','; Go's server (like RFC 7230 §3.2.4) hands the handler one
//     value joined with spaces, which is what the aws-c-auth edition of the same
//     vector expects, and that one runs;
//   - post-sts-header-after in query form adds X-Amz-Security-Token after
//     signing; S3 signs every query parameter except X-Amz-Signature.
var nonS3Vectors = map[string]bool{
	"2015/get-header-value-multiline":        true,
	"aws-c-auth/post-sts-header-after/query": true,
}

// rawRequest is an HTTP/1.1 request in the suites' text form.
type rawRequest struct {
	method, target string
	header         http.Header
	host           string
	body           string
}

// parseRawRequest reads the suites' request files. It is deliberately not
// http.ReadRequest: the files hold request lines with raw spaces and obsolete
// header folding, which the suites mean literally. Folded lines are joined
// with a space, as Go's server joins them.
func parseRawRequest(t testing.TB, text string) rawRequest {
	t.Helper()
	head, body, _ := strings.Cut(text, "\n\n")
	lines := strings.Split(head, "\n")
	requestLine := lines[0]
	method, rest, _ := strings.Cut(requestLine, " ")
	target := strings.TrimSuffix(rest, " HTTP/1.1")
	req := rawRequest{method: method, target: target, header: http.Header{}, body: body}
	var last string
	for _, line := range lines[1:] {
		if line == "" {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			values := req.header[last]
			values[len(values)-1] += " " + strings.TrimSpace(line)
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			t.Fatalf("bad header line %q", line)
		}
		name = http.CanonicalHeaderKey(name)
		value = strings.TrimSpace(value)
		if name == "Host" {
			req.host = value
			continue
		}
		req.header[name] = append(req.header[name], value)
		last = name
	}
	return req
}

// httpRequest builds the request as Go's server would hand it to a handler.
func (raw rawRequest) httpRequest(t testing.TB) *http.Request {
	t.Helper()
	path, query, _ := strings.Cut(raw.target, "?")
	u := &url.URL{Path: percentDecode(path, false), RawQuery: query}
	r := &http.Request{
		Method:        raw.method,
		URL:           u,
		RequestURI:    raw.target,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        raw.header.Clone(),
		Host:          raw.host,
		Body:          io.NopCloser(strings.NewReader(raw.body)),
		ContentLength: int64(len(raw.body)),
	}
	return r
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// vectorVerifier is a Verifier for the generic suites' scope.
func vectorVerifier(secret string, at time.Time) *Verifier {
	v := NewVerifier(staticCredentials{vectorAccessKey: secret}, vectorRegion)
	v.service = vectorService
	v.Now = func() time.Time { return at }
	v.SessionTokens = true // some vectors sign with temporary credentials
	return v
}

// staticCredentials stands for the proxy's configured client keys.
type staticCredentials map[string]string

func (c staticCredentials) Secret(accessKeyID string) (string, bool) {
	s, ok := c[accessKeyID]
	return s, ok
}

// signedVector is one signed request with the canonical request and string
// to sign it must produce.
type signedVector struct {
	name         string
	signed       rawRequest
	creq, sts    string
	signature    string
	presigned    bool
	secret       string
	expiresAfter time.Duration
}

// checkVector asserts the canonical request and string to sign byte for
// byte, then runs the request through Verify and reads its body to the end.
func checkVector(t *testing.T, vec signedVector) {
	t.Helper()
	r := vec.signed.httpRequest(t)
	payloadHash := vec.creq[strings.LastIndexByte(vec.creq, '\n')+1:]

	var fields authFields
	var amzDate time.Time
	if vec.presigned {
		pf, err := parsePresignQuery(parseQuery(r.URL.RawQuery))
		if err != nil {
			t.Fatalf("parse presigned query: %v", err)
		}
		fields, amzDate = pf.authFields, pf.amzDate
	} else {
		f, err := parseAuthorization(r.Header.Get("Authorization"))
		if err != nil {
			t.Fatalf("parse Authorization: %v", err)
		}
		fields = f
		var derr error
		amzDate, derr = time.Parse(amzDateLayout, r.Header.Get("X-Amz-Date"))
		if derr != nil {
			t.Fatal(derr)
		}
	}
	in := newCanonicalInput(r, fields, payloadHash, vec.presigned)
	creq, missing, ok := in.canonicalRequest(canonicalURI(in.rawPath))
	if !ok {
		t.Fatalf("signed header %q missing", missing)
	}
	if creq != vec.creq {
		t.Fatalf("canonical request:\n got %q\nwant %q", creq, vec.creq)
	}
	sts := stringToSign(amzDate, fields.credential.scope(), creq)
	if sts != vec.sts {
		t.Fatalf("string to sign:\n got %q\nwant %q", sts, vec.sts)
	}
	key := deriveSigningKey(vec.secret, fields.credential.date, vectorRegion, vectorService)
	if got := hex.EncodeToString(macSHA256(key[:], sts)); got != vec.signature || fields.signature != vec.signature {
		t.Fatalf("signature: computed %s, request carries %s, want %s", got, fields.signature, vec.signature)
	}

	// The whole path: S3 requires x-amz-content-sha256, which the generic
	// suite does not send; an unsigned header carrying the payload line the
	// vector used changes nothing the signature covers.
	if r.Header.Get(headerContentSHA256) == "" {
		r.Header.Set(headerContentSHA256, payloadHash)
	}
	got, err := vectorVerifier(vec.secret, vectorTime.Add(vec.expiresAfter)).Verify(r)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if got.AccessKeyID != vectorAccessKey || got.Presigned != vec.presigned || got.Mode != PayloadSHA256 {
		t.Fatalf("Verify = %+v", got)
	}
	body, err := io.ReadAll(got.Body)
	if err != nil {
		t.Fatalf("read verified body: %v", err)
	}
	if string(body) != vec.signed.body {
		t.Fatalf("body = %q, want %q", body, vec.signed.body)
	}
}

func TestAWSSigV4TestSuite(t *testing.T) {
	var groups []string
	err := filepath.WalkDir(suiteDir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".authz") {
			groups = append(groups, strings.TrimSuffix(path, ".authz"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 31 {
		t.Fatalf("found %d vector groups, the suite has 31", len(groups))
	}
	ran := 0
	for _, base := range groups {
		name, _ := filepath.Rel(suiteDir, filepath.Dir(base))
		name = strings.TrimPrefix(name, "post-sts-token/")
		if pathNormalizingVectors[name] || nonS3Vectors["2015/"+name] {
			continue
		}
		ran++
		t.Run(name, func(t *testing.T) {
			authz := readFile(t, base+".authz")
			signed := parseRawRequest(t, readFile(t, base+".sreq"))
			if signed.header.Get("Authorization") != authz {
				t.Fatalf(".sreq Authorization %q differs from .authz %q", signed.header.Get("Authorization"), authz)
			}
			fields, perr := parseAuthorization(authz)
			if perr != nil {
				t.Fatal(perr)
			}
			checkVector(t, signedVector{
				name:      name,
				signed:    signed,
				creq:      readFile(t, base+".creq"),
				sts:       readFile(t, base+".sts"),
				signature: fields.signature,
				secret:    vectorSecret,
			})
		})
	}
	if want := 31 - 6 - 1; ran != want {
		t.Fatalf("ran %d vectors, want %d", ran, want)
	}
}

func TestAWSCAuthSuite(t *testing.T) {
	entries, err := os.ReadDir(awsCAuthDir)
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, e := range entries {
		if !e.IsDir() || pathNormalizingVectors[e.Name()] {
			continue
		}
		dir := filepath.Join(awsCAuthDir, e.Name())
		var ctx struct {
			Credentials struct {
				Secret string `json:"secret_access_key"`
			} `json:"credentials"`
			Expires int `json:"expiration_in_seconds"`
		}
		if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "context.json"))), &ctx); err != nil {
			t.Fatal(err)
		}
		for _, form := range []string{"header", "query"} {
			if nonS3Vectors["aws-c-auth/"+e.Name()+"/"+form] {
				continue
			}
			ran++
			t.Run(e.Name()+"/"+form, func(t *testing.T) {
				checkVector(t, signedVector{
					name:      e.Name(),
					signed:    parseRawRequest(t, readFile(t, filepath.Join(dir, form+"-signed-request.txt"))),
					creq:      readFile(t, filepath.Join(dir, form+"-canonical-request.txt")),
					sts:       readFile(t, filepath.Join(dir, form+"-string-to-sign.txt")),
					signature: readFile(t, filepath.Join(dir, form+"-signature.txt")),
					presigned: form == "query",
					secret:    ctx.Credentials.Secret,
					// Presigned URLs are checked a minute before they expire.
					expiresAfter: map[bool]time.Duration{true: time.Duration(ctx.Expires)*time.Second - time.Minute}[form == "query"],
				})
			})
		}
	}
	if want := 2*(38-6) - 1; ran != want {
		t.Fatalf("ran %d vectors, want %d", ran, want)
	}
}

// TestPathNormalizingVectorsDifferFromS3 keeps the exclusion list honest: a
// listed vector is excluded only because its canonical URI is not S3's.
func TestPathNormalizingVectorsDifferFromS3(t *testing.T) {
	for name := range pathNormalizingVectors {
		var requestFile, creqFile string
		if strings.HasPrefix(name, "normalize-path/") {
			base := filepath.Join(suiteDir, name, filepath.Base(name))
			requestFile, creqFile = base+".req", base+".creq"
		} else {
			requestFile = filepath.Join(awsCAuthDir, name, "request.txt")
			creqFile = filepath.Join(awsCAuthDir, name, "header-canonical-request.txt")
		}
		raw := parseRawRequest(t, readFile(t, requestFile))
		wantURI := strings.Split(readFile(t, creqFile), "\n")[1]
		path, _, _ := strings.Cut(raw.target, "?")
		if got := canonicalURI(path); got == wantURI {
			t.Errorf("%s: S3's canonical URI %q equals the vector's; it should run, not be excluded", name, got)
		}
	}
}

// The streaming example of the S3 documentation: the seed signature of a
// STREAMING-AWS4-HMAC-SHA256-PAYLOAD upload, then its chunk signatures.
const (
	streamAccessKey = "AKIAIOSFODNN7EXAMPLE"
	streamSecret    = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	streamSeed      = "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"
)

func streamingExampleRequest(t testing.TB, chunk1 string) *http.Request {
	body := "10000;chunk-signature=ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648\r\n" +
		chunk1 + "\r\n" +
		"400;chunk-signature=0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497\r\n" +
		strings.Repeat("a", 1024) + "\r\n" +
		"0;chunk-signature=b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9\r\n\r\n"
	raw := rawRequest{
		method: "PUT", target: "/examplebucket/chunkObject.txt", host: "s3.amazonaws.com", body: body,
		header: http.Header{
			"X-Amz-Date":                   {"20130524T000000Z"},
			"X-Amz-Storage-Class":          {"REDUCED_REDUNDANCY"},
			"X-Amz-Content-Sha256":         {"STREAMING-AWS4-HMAC-SHA256-PAYLOAD"},
			"Content-Encoding":             {"aws-chunked"},
			"X-Amz-Decoded-Content-Length": {"66560"},
			"Content-Length":               {"66824"},
			"Authorization": {"AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request," +
				"SignedHeaders=content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class," +
				"Signature=" + streamSeed},
		},
	}
	r := raw.httpRequest(t)
	if r.ContentLength != 66824 {
		t.Fatalf("example body is %d bytes, the example says 66824", r.ContentLength)
	}
	return r
}

func TestStreamingExample(t *testing.T) {
	newVerifier := func() *Verifier {
		v := NewVerifier(staticCredentials{streamAccessKey: streamSecret}, "us-east-1")
		v.Now = func() time.Time { return time.Date(2013, 5, 24, 0, 5, 0, 0, time.UTC) }
		return v
	}
	t.Run("verifies", func(t *testing.T) {
		got, err := newVerifier().Verify(streamingExampleRequest(t, strings.Repeat("a", 65536)))
		if err != nil {
			t.Fatal(err)
		}
		if got.Mode != PayloadStreamingSigned || got.AccessKeyID != streamAccessKey {
			t.Fatalf("Verify = %+v", got)
		}
		body, err := io.ReadAll(got.Body)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if string(body) != strings.Repeat("a", 66560) {
			t.Fatalf("decoded %d bytes, want 66560 x 'a'", len(body))
		}
	})
	t.Run("tampered chunk fails", func(t *testing.T) {
		got, err := newVerifier().Verify(streamingExampleRequest(t, strings.Repeat("a", 65535)+"b"))
		if err != nil {
			t.Fatal(err) // the seed still verifies; the chunk cannot
		}
		if _, err := io.Copy(io.Discard, got.Body); err == nil {
			t.Fatal("tampered chunk read without error")
		}
	})
	t.Run("signing key", func(t *testing.T) {
		key := deriveSigningKey(streamSecret, "20130524", "us-east-1", "s3")
		if got := hex.EncodeToString(key[:]); got != "dbb893acc010964918f1fd433add87c70e8b0db6be30c1fbeafefa5ec6ba8378" {
			t.Fatalf("signing key %s", got)
		}
	})
}

// sanity: the helper parser reads what it is given.
func TestParseRawRequestFolding(t *testing.T) {
	raw := parseRawRequest(t, "GET /a b?x=1 HTTP/1.1\nHost:h\nMy:v1\n  v2\n\nbody")
	if raw.target != "/a b?x=1" || raw.host != "h" || raw.header.Get("My") != "v1 v2" || raw.body != "body" {
		t.Fatalf("%+v", raw)
	}
}

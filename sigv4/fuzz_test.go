package sigv4

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

func FuzzParseAuthorization(f *testing.F) {
	f.Add("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
		"X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE%2F20150830%2Fus-east-1%2Fservice%2Faws4_request&X-Amz-Date=20150830T123600Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature=abc")
	f.Add("AWS4-HMAC-SHA256 Signature=x,Credential=a/b/c/d/e,SignedHeaders=host", "X-Amz-Expires=604801")
	f.Add("AWS AKID:c2lnbmF0dXJl", "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=-1")
	f.Add("AWS4-HMAC-SHA256 Credential=, SignedHeaders=;;, Signature=", "X-Amz-Credential=%2F%2F%2F%2F&X-Amz-Date=x")
	f.Fuzz(func(t *testing.T, header, rawQuery string) {
		fields, err := parseAuthorization(header)
		if err == nil {
			checkParsedFields(t, fields)
			// Parsed fields written back in canonical form parse to the same.
			rebuilt := signingAlgorithm + " Credential=" + fields.credential.accessKeyID + "/" + fields.credential.scope() +
				", SignedHeaders=" + fields.signedHeaders + ", Signature=" + fields.signature
			again, err := parseAuthorization(rebuilt)
			if err != nil {
				t.Fatalf("rebuilt header %q does not parse: %v", rebuilt, err)
			}
			if again.credential != fields.credential || again.signature != fields.signature || !slices.Equal(slices.Collect(again.names()), slices.Collect(fields.names())) {
				t.Fatalf("rebuilt header parses differently: %+v vs %+v", again, fields)
			}
		} else if err.Status() != http.StatusBadRequest {
			t.Fatalf("parse error %v has status %d, want 400", err, err.Status())
		}

		presign, err := parsePresignQuery(parseQuery(rawQuery))
		if err == nil {
			checkParsedFields(t, presign.authFields)
			if presign.expires < time.Second || presign.expires > maxPresignExpiresSeconds*time.Second {
				t.Fatalf("accepted X-Amz-Expires of %v", presign.expires)
			}
		} else if err.Status() != http.StatusBadRequest {
			t.Fatalf("presign error %v has status %d, want 400", err, err.Status())
		}
	})
}

func checkParsedFields(t *testing.T, fields authFields) {
	t.Helper()
	c := fields.credential
	for _, part := range []string{c.accessKeyID, c.date, c.region, c.service, c.terminator} {
		if part == "" || strings.Contains(part, "/") {
			t.Fatalf("credential part %q of %+v", part, c)
		}
	}
	for name := range fields.names() {
		if name == "" || strings.Contains(name, ";") || name != strings.ToLower(name) {
			t.Fatalf("signed header name %q", name)
		}
	}
}

// sdkCanonicalQuery is how aws-sdk-go-v2's signer canonicalises a query it
// could parse: url.ParseQuery, url.QueryEscape with %20 for space, sorted.
func sdkCanonicalQuery(values url.Values) string {
	var params []string
	for name, vals := range values {
		for _, v := range vals {
			params = append(params, strings.ReplaceAll(url.QueryEscape(name), "+", "%20")+"="+strings.ReplaceAll(url.QueryEscape(v), "+", "%20"))
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
	return strings.Join(params, "&")
}

func FuzzCanonicalRequest(f *testing.F) {
	f.Add("GET", "/example space/ሴ", "Param-3=Value3&Param=Value2&%E1%88%B4=Value1", "value1\r\n  value2")
	f.Add("PUT", "/b/a+b%2Fc%zz", "a=%7e&b=x+y&c&d=%2f&;e", "  x  ")
	f.Add("POST", "", "X-Amz-Signature=abc&X-Amz-Date=1", "")
	f.Fuzz(func(t *testing.T, method, rawPath, rawQuery, headerValue string) {
		uri := canonicalURI(rawPath)
		if canonicalURI(uri) != uri {
			t.Fatalf("canonicalURI not idempotent: %q -> %q -> %q", rawPath, uri, canonicalURI(uri))
		}
		query := canonicalQuery(rawQuery, false)
		if canonicalQuery(query, false) != query {
			t.Fatalf("canonicalQuery not idempotent: %q -> %q", rawQuery, query)
		}
		if values, err := url.ParseQuery(rawQuery); err == nil {
			if want := sdkCanonicalQuery(values); query != want {
				t.Fatalf("canonical query of %q:\n got %q\nSDK %q", rawQuery, query, want)
			}
		}
		if presigned := canonicalQuery(rawQuery, true); strings.Contains("&"+presigned, "&X-Amz-Signature=") {
			t.Fatalf("presigned canonical query keeps the signature: %q", presigned)
		}
		if s := percentDecode(uriEncode(rawPath, true), false); s != rawPath {
			t.Fatalf("decode(encode(%q)) = %q", rawPath, s)
		}

		if strings.ContainsAny(method, "\n") {
			return
		}
		in := canonicalInput{
			method:        method,
			rawPath:       rawPath,
			rawQuery:      rawQuery,
			header:        http.Header{"X-Test": {headerValue}},
			host:          "example.com",
			contentLength: -1,
			signedHeaders: "host;x-test",
			payloadHash:   unsignedPayload,
		}
		creq, _, ok := in.canonicalRequest(uri)
		if !ok {
			t.Fatal("present headers reported missing")
		}
		lines := strings.Split(creq, "\n")
		if len(lines) != 8 || lines[0] != method || lines[1] != uri || lines[2] != query || lines[5] != "" || lines[7] != unsignedPayload {
			t.Fatalf("canonical request has the wrong shape: %q", creq)
		}
		value := strings.TrimPrefix(lines[4], "x-test:")
		// SigV4's Trimall works on ASCII spaces only, as the AWS SDKs do:
		// other Unicode spaces (U+00A0) are part of the value.
		if strings.Contains(value, "  ") || strings.Trim(value, " ") != value {
			t.Fatalf("header value not trimmed and collapsed: %q", value)
		}
	})
}

func BenchmarkVerifyHeaderAuth(b *testing.B) {
	r := signedRequest(b, "GET", "/bucket/some/key%20name.txt?versionId=3&partNumber=2", "", signOptions{payloadHash: EmptyPayloadHash})
	v := testVerifier()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCanonicalRequest(b *testing.B) {
	r := signedRequest(b, "PUT", "/bucket/some/key%20name.txt?uploadId=abc&partNumber=2", "", signOptions{})
	fields, err := parseAuthorization(r.Header.Get("Authorization"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		in := newCanonicalInput(r, fields, unsignedPayload, false)
		if _, _, ok := in.canonicalRequest(canonicalURI(in.rawPath)); !ok {
			b.Fatal("missing header")
		}
	}
}

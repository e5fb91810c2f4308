package proxy

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/s3err"
)

func renameCall(source string, header http.Header, query url.Values) *call {
	r := httptest.NewRequest(http.MethodPut, "/b/dst?renameObject", nil)
	for k, v := range header {
		r.Header[k] = v
	}
	if source != "" {
		r.Header.Set("X-Amz-Rename-Source", source)
	}
	return &call{r: r, target: operation.Target{Bucket: "b", Key: "dst", RawKey: "dst"}, backend: &Backend{}, parsedQuery: query}
}

// The rename source as the service model writes it ("[/]bucket/key",
// URL-encoded), and what S3 refuses.
func TestParseRenameSource(t *testing.T) {
	cases := []struct {
		source string
		key    string      // parsed, when accepted
		code   s3err.Code  // else the refusal
		header http.Header // extra headers
		query  url.Values  // hoisted parameters
	}{
		{source: "b/src", key: "src"},
		{source: "/b/dir/a%20b", key: "dir/a b"},
		{source: "b/%E2%82%AC", key: "€"},
		{source: "other/src", code: s3err.InvalidRequest},
		{source: "b/dir/", code: s3err.InvalidRequest},
		{source: "b/dst", code: s3err.InvalidRequest},
		{source: "src", code: s3err.InvalidArgument},
		{source: "b/", code: s3err.InvalidArgument},
		{source: "b/%zz", code: s3err.InvalidArgument},
		{source: "", code: s3err.InvalidArgument},
		{source: "", query: url.Values{"x-amz-rename-source": {"b/hoisted"}}, key: "hoisted"},
		{source: "b/src", query: url.Values{"x-amz-rename-source": {"b/other"}}, code: s3err.InvalidArgument},
		{source: "b/src", header: http.Header{"If-None-Match": {`"abc"`}}, code: s3err.NotImplemented},
	}
	for _, tc := range cases {
		req, err := parseRename(renameCall(tc.source, tc.header, tc.query))
		if tc.code == "" && err == nil && tc.key == "" {
			t.Fatalf("%q: a case without a key or a refusal", tc.source)
		}
		switch {
		case tc.code == "" && err != nil:
			t.Errorf("%q: %v", tc.source, err)
		case tc.code == "" && req.source != tc.key:
			t.Errorf("%q: key %q, want %q", tc.source, req.source, tc.key)
		case tc.code != "" && (err == nil || s3err.As(err).Code != tc.code):
			t.Errorf("%q: %v, want %s", tc.source, err, tc.code)
		}
	}
}

// x-amz-client-token: 1 to 64 characters of ASCII 33–126, S3's bound.
func TestParseClientToken(t *testing.T) {
	ok := []string{"a", strings.Repeat("z", 64), "!~" + strings.Repeat("0", 62)}
	bad := []string{"", strings.Repeat("z", 65), "with space", "tab\tx", "é", "\x7f"}
	for _, token := range ok {
		if got, err := parseClientToken(http.Header{"X-Amz-Client-Token": {token}}); err != nil || got != token {
			t.Errorf("%q: %q %v", token, got, err)
		}
	}
	for _, token := range bad {
		if _, err := parseClientToken(http.Header{"X-Amz-Client-Token": {token}}); err == nil || s3err.As(err).Code != s3err.InvalidArgument {
			t.Errorf("%q: %v, want InvalidArgument", token, err)
		}
	}
	if _, err := parseClientToken(http.Header{"X-Amz-Client-Token": {"a", "b"}}); err == nil {
		t.Error("a token given twice was taken")
	}
}

// A token's record is its principal's: the same token from another key,
// or in another bucket, is another row; other parameters, another digest.
func TestClientTokenRecordIsBoundToItsPrincipal(t *testing.T) {
	if tokenPath("AKIA1", "b", "t") == tokenPath("AKIA2", "b", "t") || tokenPath("AKIA1", "b", "t") == tokenPath("AKIA1", "c", "t") {
		t.Fatal("two principals' (or buckets') tokens share a record")
	}
	a := renameRequest{bucket: "b", source: "s", destination: "d", header: http.Header{"If-Match": {`"1"`}}}
	b := a
	b.header = http.Header{"If-Match": {`"2"`}}
	c := a
	c.destination = "e"
	if a.parametersDigest() == b.parametersDigest() || a.parametersDigest() == c.parametersDigest() {
		t.Fatal("different parameters share a digest")
	}
	if a.parametersDigest() != (renameRequest{bucket: "b", source: "s", destination: "d", header: http.Header{"If-Match": {`"1"`}}}).parametersDigest() {
		t.Fatal("the same parameters give two digests")
	}
}

// Under key_policy: normalize, a source that names the destination's
// object another way is the same key: refused, not leased twice.
func TestRenameSourceNormalizedToTheDestination(t *testing.T) {
	c := renameCall("b/a//b", nil, nil)
	c.target = operation.Target{Bucket: "b", Key: "a/b", RawKey: "a/b"}
	c.backend.KeyPolicy = KeyPolicyNormalize
	if _, err := parseRename(c); err == nil || s3err.As(err).Code != s3err.InvalidRequest {
		t.Fatalf("a//b renamed to a/b under normalize: %v, want InvalidRequest", err)
	}
}

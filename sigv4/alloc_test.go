package sigv4

import (
	"net/http"
	"net/textproto"
	"testing"
)

// The verifier's lookups avoid canonicalising header names per request;
// these check that what they look up is what Go's server keys headers by.

func TestChecksumCanonicalHeaders(t *testing.T) {
	for _, alg := range checksumAlgorithms {
		if want := http.CanonicalHeaderKey(alg.header); alg.canonicalHeader != want {
			t.Errorf("%s: canonicalHeader %q, want %q", alg.header, alg.canonicalHeader, want)
		}
	}
}

func TestAppendCanonicalHeaderKeyMatchesTextproto(t *testing.T) {
	for _, name := range []string{"x-amz-date", "X-AMZ-DATE", "content-md5", "x-amz-meta-a1-b2", "host", "a", "-x-", "x--y", "x-amz-meta-ü", "bad name", "under_score"} {
		var buf [64]byte
		got, ok := appendCanonicalHeaderKey(buf[:0], name)
		want := textproto.CanonicalMIMEHeaderKey(name)
		if ok && string(got) != want {
			t.Errorf("%q: %q, textproto %q", name, got, want)
		}
		if !ok && name != "bad name" && name != "under_score" && name != "x-amz-meta-ü" {
			t.Errorf("%q declined (lookupHeader then pays for http.CanonicalHeaderKey)", name)
		}
	}
}

func TestLookupHeaderAnySpelling(t *testing.T) {
	h := http.Header{"X-Amz-Date": {"canonical"}, "x-amz-meta-raw": {"as set"}, "Under_score": {"textproto's"}}
	for name, want := range map[string]string{"x-amz-date": "canonical", "X-AMZ-DATE": "canonical", "x-amz-meta-raw": "as set", "X-Amz-Meta-Raw": "as set", "under_score": "textproto's"} {
		if v, ok := lookupHeader(h, name); !ok || v[0] != want {
			t.Errorf("%q: %v %v, want %q", name, v, ok, want)
		}
	}
	if _, ok := lookupHeader(h, "x-amz-missing"); ok {
		t.Error("found a header that is not there")
	}
}

func TestParseCredentialShapes(t *testing.T) {
	if c, ok := parseCredential("AK/20261201/us-east-1/s3/aws4_request"); !ok || c.accessKeyID != "AK" || c.terminator != "aws4_request" {
		t.Fatalf("valid credential: %+v %v", c, ok)
	}
	for _, bad := range []string{"", "AK/20261201/us-east-1/s3", "AK/20261201/us-east-1/s3/aws4_request/x", "AK//us-east-1/s3/aws4_request", "AK/20261201/us-east-1/s3/"} {
		if _, ok := parseCredential(bad); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}

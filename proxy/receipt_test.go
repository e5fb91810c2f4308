package proxy

import (
	"net/http"
	"strings"
	"testing"
)

// The invocation id is the client's: only one value of 1 to 64 printable
// ASCII characters is kept; anything else is no id, and the write leaves
// no receipt and reads none.
func TestInvocationIDIsABoundedOpaqueString(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []string
		want   string
	}{
		{"a UUID", []string{"3f1c7a52-0d7e-4c1e-9d3a-6b1f2e8c9a10"}, "3f1c7a52-0d7e-4c1e-9d3a-6b1f2e8c9a10"},
		{"none", nil, ""},
		{"empty", []string{""}, ""},
		{"two values", []string{"a", "b"}, ""},
		{"65 characters", []string{strings.Repeat("x", 65)}, ""},
		{"64 characters", []string{strings.Repeat("x", 64)}, strings.Repeat("x", 64)},
		{"a space", []string{"a b"}, ""},
		{"a control byte", []string{"a\x01b"}, ""},
		{"UTF-8", []string{"é"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := http.NewRequest(http.MethodPut, "http://h/b/k", nil)
			for _, v := range tc.values {
				r.Header.Add("Amz-Sdk-Invocation-Id", v)
			}
			if got := invocationID(r); got != tc.want {
				t.Fatalf("invocationID = %q, want %q", got, tc.want)
			}
		})
	}
}

// An SDK's first attempt reads no receipt; a retry, or a client that says
// nothing, does.
func TestFirstAttemptReadsNoReceipt(t *testing.T) {
	for header, want := range map[string]bool{
		"attempt=1; max=3":  true,
		"ttl=x; attempt=1":  true,
		"attempt=2; max=3":  false,
		"attempt=10; max=3": false,
		"":                  false,
	} {
		r, _ := http.NewRequest(http.MethodPut, "http://h/b/k", nil)
		r.Header.Set("Amz-Sdk-Request", header)
		if got := firstAttempt(r); got != want {
			t.Errorf("firstAttempt(%q) = %v, want %v", header, got, want)
		}
	}
}

// A receipt decodes only from what encode wrote; a row's text that is not
// a receipt is none.
func TestReceiptRoundTripsAndGarbageIsNone(t *testing.T) {
	r := receipt{Op: "PutObject", Principal: "AKIA", Invocation: "i", Content: "length 4 sha256 ab", ETag: `"e"`,
		Header: map[string]string{"ETag": `"e"`}}
	got, ok := decodeReceipt(r.encode())
	if !ok || got.Content != r.Content || got.ETag != r.ETag || got.Header["ETag"] != `"e"` {
		t.Fatalf("decoded %+v, %v", got, ok)
	}
	for _, text := range []string{"", "not json", "[1]"} {
		if _, ok := decodeReceipt(text); ok {
			t.Errorf("decodeReceipt(%q) read a receipt", text)
		}
	}
}

// A copy's receipt keeps only CopyObjectResult's own fields; any other
// document (an error inside a 200) makes no receipt.
func TestCopyResultKeepsOnlyItsFields(t *testing.T) {
	kept, etag := copyResult([]byte(`<?xml version="1.0" encoding="UTF-8"?>
<CopyObjectResult><LastModified>2026-12-07T03:48:16Z</LastModified><ETag>"abc"</ETag><Owner>backend-root</Owner><ChecksumCRC32>AAAAAA==</ChecksumCRC32></CopyObjectResult>`))
	if etag != `"abc"` || !strings.Contains(kept, "<ChecksumCRC32>AAAAAA==</ChecksumCRC32>") ||
		!strings.Contains(kept, "2026-12-07T03:48:16Z") || strings.Contains(kept, "backend-root") {
		t.Fatalf("copyResult kept %q, ETag %q", kept, etag)
	}
	for _, doc := range []string{`<Error><Code>InternalError</Code></Error>`, `<CopyObjectResult><LastModified>x</LastModified>`, ``} {
		if kept, etag := copyResult([]byte(doc)); kept != "" || etag != "" {
			t.Errorf("copyResult(%q) = %q, %q; want no receipt", doc, kept, etag)
		}
	}
}

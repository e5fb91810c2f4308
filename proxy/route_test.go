package proxy

import (
	"net/http"
	"net/url"
	"testing"
)

func TestOutboundQueryDropsAuthParamsAndIsRebuilt(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"X-Amz-Algorithm=AWS4-HMAC-SHA256&prefix=a%2Fb+c&X-Amz-Credential=x%2Fy&list-type=2&X-Amz-Signature=abc&uploads&X-Amz-Date=1&X-Amz-Expires=5&X-Amz-SignedHeaders=host",
			"list-type=2&prefix=a%2Fb%20c&uploads"},
		// Escaped names are the same parameters to the store.
		{"X-Amz-Signatur%65=abc&X-Amz-Credential%3Dx=1&X%2DAmz%2DDate=1&uploads", "X-Amz-Credential%3Dx=1&uploads"},
		// Numbers go on as numbers, whatever their spelling.
		{"max-keys=007&prefix=", "max-keys=7&prefix"},
	} {
		q, err := url.ParseQuery(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := checkQuery(q, KeyPolicyStrict)
		if err != nil || got.raw != tc.want {
			t.Errorf("%q: got %q, %v; want %q", tc.in, got.raw, err, tc.want)
		}
	}
}

func TestOutboundHeaderPolicy(t *testing.T) {
	in := http.Header{
		"Authorization":                {"AWS4-HMAC-SHA256 ..."},
		"X-Amz-Date":                   {"20250101T000000Z"},
		"X-Amz-Content-Sha256":         {"STREAMING-UNSIGNED-PAYLOAD-TRAILER"},
		"X-Amz-Decoded-Content-Length": {"5"},
		"X-Amz-Trailer":                {"x-amz-checksum-crc32"},
		"Content-Encoding":             {"aws-chunked,gzip"},
		"Connection":                   {"keep-alive, X-Private"},
		"X-Private":                    {"hop"},
		"Keep-Alive":                   {"timeout=5"},
		"X-Amz-Meta-Colour":            {"blue"},
		"X-Amz-Checksum-Crc32":         {"AAAAAA=="},
		"If-None-Match":                {"*"},
		"Range":                        {"bytes=0-1"},
	}
	out := outboundHeader(in, false, true)
	for _, gone := range []string{"Authorization", "X-Amz-Date", "X-Amz-Content-Sha256", "X-Amz-Decoded-Content-Length",
		"X-Amz-Trailer", "Connection", "X-Private", "Keep-Alive", "X-Amz-Checksum-Crc32", "If-None-Match"} {
		if _, ok := out[gone]; ok {
			t.Errorf("%s was forwarded", gone)
		}
	}
	if out.Get("Content-Encoding") != "gzip" || out.Get("X-Amz-Meta-Colour") != "blue" || out.Get("Range") != "bytes=0-1" {
		t.Errorf("kept headers wrong: %v", out)
	}
	if outboundHeader(in, true, false).Get("X-Amz-Checksum-Crc32") == "" {
		t.Error("checksum dropped in forward mode")
	}
	if outboundHeader(in, true, false).Get("If-None-Match") != "*" {
		t.Error("condition dropped when it should be kept")
	}
}

func TestBackendURLKeepsRawKey(t *testing.T) {
	u, _ := url.Parse("http://store:7070/base")
	b := &Backend{Endpoint: u, Buckets: map[string]string{"client": "real"}}
	got := b.URL("client", "a%2Bb/c%20d", "x=1%2B")
	if got.String() != "http://store:7070/base/real/a%2Bb/c%20d?x=1%2B" {
		t.Fatalf("path style: %s", got)
	}
	b.VirtualHosted = true
	if got := b.URL("client", "k", ""); got.String() != "http://real.store:7070/base/k" {
		t.Fatalf("virtual hosted: %s", got)
	}
}

func TestIsChecksumHeader(t *testing.T) {
	for name, want := range map[string]bool{
		"X-Amz-Checksum-Crc32": true, "x-amz-checksum-sha256": true, "X-Amz-Sdk-Checksum-Algorithm": true,
		"X-Amz-Checksum-": false, "X-Amz-Checksum": false, "X-Amz-Meta-Checksum": false, "Content-Md5": false,
	} {
		if got := isChecksumHeader(name); got != want {
			t.Errorf("isChecksumHeader(%q) = %v, want %v", name, got, want)
		}
	}
	if allocs := testing.AllocsPerRun(100, func() { isChecksumHeader("X-Amz-Checksum-Crc32c") }); allocs != 0 {
		t.Errorf("isChecksumHeader allocates %v times per call", allocs)
	}
}

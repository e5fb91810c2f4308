package proxy

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/s3cond/s3cond/internal/s3err"
)

func TestClassify(t *testing.T) {
	copyHdr := http.Header{"X-Amz-Copy-Source": {"/b/k"}}
	cases := []struct {
		method, bucket, key, query string
		header                     http.Header
		want                       Operation
	}{
		{"GET", "", "", "", nil, ListBuckets},
		{"PUT", "b", "", "", nil, CreateBucket},
		{"DELETE", "b", "", "", nil, DeleteBucket},
		{"HEAD", "b", "", "", nil, HeadBucket},
		{"GET", "b", "", "", nil, ListObjects},
		{"GET", "b", "", "list-type=2&prefix=a", nil, ListObjectsV2},
		{"GET", "b", "", "uploads", nil, ListMultipartUploads},
		{"POST", "b", "", "delete", nil, DeleteObjects},
		{"GET", "b", "", "versioning", nil, OtherRead},
		{"PUT", "b", "", "policy", nil, OtherWrite},
		{"GET", "b", "k", "", nil, GetObject},
		{"HEAD", "b", "k", "", nil, HeadObject},
		{"PUT", "b", "k", "", nil, PutObject},
		{"PUT", "b", "k", "", copyHdr, CopyObject},
		{"PUT", "b", "k", "partNumber=1&uploadId=u", nil, UploadPart},
		{"PUT", "b", "k", "partNumber=1&uploadId=u", copyHdr, UploadPartCopy},
		{"PUT", "b", "k", "tagging", nil, OtherWrite},
		{"GET", "b", "k", "tagging", nil, OtherRead},
		{"DELETE", "b", "k", "", nil, DeleteObject},
		{"DELETE", "b", "k", "tagging", nil, OtherWrite},
		{"DELETE", "b", "k", "uploadId=u", nil, AbortMultipartUpload},
		{"POST", "b", "k", "uploads", nil, CreateMultipartUpload},
		{"POST", "b", "k", "uploadId=u", nil, CompleteMultipartUpload},
		{"GET", "b", "k", "uploadId=u", nil, ListParts},
	}
	for _, c := range cases {
		q, _ := url.ParseQuery(c.query)
		h := c.header
		if h == nil {
			h = http.Header{}
		}
		if got := classify(c.method, c.bucket, c.key, q, h); got != c.want {
			t.Errorf("%s /%s/%s?%s = %v, want %v", c.method, c.bucket, c.key, c.query, got, c.want)
		}
	}
}

func TestResolveTarget(t *testing.T) {
	cases := []struct {
		host, uri, domain string
		bucket, key, raw  string
		code              s3err.Code
	}{
		{"s3cond:9000", "/bkt/a/b%20c.txt", "", "bkt", "a/b c.txt", "a/b%20c.txt", ""},
		{"s3cond:9000", "/bkt", "", "bkt", "", "", ""},
		{"s3cond:9000", "/", "", "", "", "", ""},
		{"bkt.s3.local:9000", "/x%2By", "s3.local", "bkt", "x+y", "x%2By", ""},
		{"s3.local", "/bkt/k", "s3.local", "bkt", "k", "k", ""},
		{"s3cond", "/bkt/%ZZ", "", "", "", "", s3err.InvalidURI},
		{"s3cond", "/bkt/%FF", "", "", "", "", s3err.InvalidURI},
		{"s3cond", "/b/k", "", "", "", "", s3err.InvalidBucketName},
	}
	for _, c := range cases {
		r := httptest.NewRequest("GET", "http://"+c.host+"/", nil)
		r.RequestURI = c.uri
		r.Host = c.host
		got, err := resolveTarget(r, c.domain)
		if c.code != "" {
			if !s3err.Is(err, c.code) {
				t.Errorf("%s%s: err %v, want %s", c.host, c.uri, err, c.code)
			}
			continue
		}
		if err != nil || got.Bucket != c.bucket || got.Key != c.key || got.RawKey != c.raw {
			t.Errorf("%s%s = %+v, %v; want %s %q %q", c.host, c.uri, got, err, c.bucket, c.key, c.raw)
		}
	}
}

func TestOutboundRawQueryDropsOnlyAuthParams(t *testing.T) {
	in := "X-Amz-Algorithm=AWS4-HMAC-SHA256&prefix=a%2Fb+c&X-Amz-Credential=x%2Fy&list-type=2&X-Amz-Signature=abc&empty&X-Amz-Date=1&X-Amz-Expires=5&X-Amz-SignedHeaders=host"
	if got, want := outboundRawQuery(in), "prefix=a%2Fb+c&list-type=2&empty"; got != want {
		t.Fatalf("got %q, want %q", got, want)
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

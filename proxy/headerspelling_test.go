package proxy

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/internal/backendhttp"
	"github.com/s3cond/s3cond/sigv4"
)

func TestS3ResponseName(t *testing.T) {
	cases := map[string]string{
		"X-Amz-Meta-Foo":          "x-amz-meta-foo",
		"X-Amz-Meta-My_key":       "x-amz-meta-my_key",
		"X-Amz-Checksum-Crc32":    "x-amz-checksum-crc32",
		"X-Amz-Checksum-Xxhash64": "x-amz-checksum-xxhash64",
		"X-Amz-Version-Id":        "x-amz-version-id",
		"X-Amz-Id-2":              "x-amz-id-2",
		"Etag":                    "ETag",
		"Content-Type":            "Content-Type",
		"Last-Modified":           "Last-Modified",
		"X-Amz":                   "X-Amz",
		"X-Custom-Header":         "X-Custom-Header",
	}
	for in, want := range cases {
		if got := s3ResponseName(in); got != want {
			t.Errorf("s3ResponseName(%q) = %q, want %q", in, got, want)
		}
	}
	for canonical, lower := range amzResponseNames {
		if canonical != textproto.CanonicalMIMEHeaderKey(lower) {
			t.Errorf("table key %q is not the canonical form of %q", canonical, lower)
		}
	}
}

func TestCopyResponseHeaderSpellsNamesAsS3(t *testing.T) {
	src := http.Header{
		"X-Amz-Meta-Foo":       {"bar"},
		"X-Amz-Request-Id":     {"BACKEND1", "BACKEND1"},
		"Etag":                 {`"abc"`},
		"Connection":           {"X-Private"},
		"X-Private":            {"hop"},
		"Content-Type":         {"text/plain"},
		"X-Amz-Checksum-Crc32": {"AAAAAA=="},
	}
	dst := http.Header{}
	dst[requestIDHeader] = []string{"ours"} // what the request-ID middleware set
	copyResponseHeader(dst, src, "ours")
	want := http.Header{
		"x-amz-meta-foo":              {"bar"},
		"ETag":                        {`"abc"`},
		"Content-Type":                {"text/plain"},
		"x-amz-checksum-crc32":        {"AAAAAA=="},
		"X-S3cond-Backend-Request-Id": {"BACKEND1"},
		"x-amz-request-id":            {"ours"},
	}
	if len(dst) != len(want) {
		t.Fatalf("header = %v, want %v", dst, want)
	}
	for name, values := range want {
		if got := dst[name]; strings.Join(got, "|") != strings.Join(values, "|") {
			t.Errorf("%s = %q, want %q (all: %v)", name, got, values, dst)
		}
	}
}

// TestResponseHeaderNamesOnTheWire checks the bytes a client receives, on
// both backend paths: GET and HEAD go through SpliceTransport's own parser,
// a POST through net/http's transport. The stub backend stands for an S3
// store that sends x-amz-meta-* in lower case, as S3 and versitygw do.
func TestResponseHeaderNamesOnTheWire(t *testing.T) {
	backendServer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header()["x-amz-meta-foo"] = []string{"bar"}
		w.Header()["x-amz-meta-camel"] = []string{"x"}
		w.Header()["ETag"] = []string{`"e"`}
		w.Header()["x-amz-request-id"] = []string{"BACKENDID"}
		w.Header().Set("Content-Length", "0")
	}))
	t.Cleanup(backendServer.Close)
	u, _ := url.Parse(backendServer.URL)
	backend := &Backend{Name: "stub", Endpoint: u, Client: &http.Client{Transport: sigv4.NewResigner(
		backendhttp.NewSpliceTransport(backendhttp.NewBackendTransport()),
		credentials.NewStaticCredentialsProvider("backend", "backend-secret", ""), "us-east-1")}}
	p := New(Options{Auth: sigv4.NewVerifier(staticKeys{}, "us-east-1"), Access: staticKeys{}, Backend: backend, Log: zerolog.Nop()})
	front := httptest.NewServer(p)
	t.Cleanup(front.Close)
	host := wireHost(front.URL)

	for _, method := range []string{http.MethodGet, http.MethodHead, http.MethodPost} {
		t.Run(method, func(t *testing.T) {
			target := "/" + bucketName + "/key"
			if method == http.MethodPost {
				target += "?uploads"
			}
			r := &wireRequest{method: method, target: target}
			if method == http.MethodPost {
				r.add("Content-Length", "0")
			}
			r.sign(t, host, sigv4.EmptyPayloadHash)
			names := rawResponseNames(t, host, r.bytes(host))
			for _, want := range []string{"x-amz-meta-foo", "x-amz-meta-camel", "ETag", "x-amz-request-id"} {
				if !names[want] {
					t.Errorf("response lacks header line %q; names sent: %v", want, names)
				}
			}
			for _, unwanted := range []string{"X-Amz-Meta-Foo", "X-Amz-Request-Id", "Etag"} {
				if names[unwanted] {
					t.Errorf("response has %q; names sent: %v", unwanted, names)
				}
			}
		})
	}
}

// rawResponseNames sends raw on a fresh connection and returns the header
// names of the answer exactly as they arrived.
func rawResponseNames(t *testing.T, host string, raw []byte) map[string]bool {
	t.Helper()
	return rawResponseNamesWithStatus(t, host, raw, http.StatusOK)
}

// rawResponseNamesWithStatus is rawResponseNames for an answer of status.
func rawResponseNamesWithStatus(t *testing.T, host string, raw []byte, want int) map[string]bool {
	t.Helper()
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write(raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	status, err := br.ReadString('\n')
	if err != nil || !strings.Contains(status, " "+strconv.Itoa(want)+" ") {
		t.Fatalf("status line %q, err %v", status, err)
	}
	names := map[string]bool{}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			return names
		}
		name, _, _ := strings.Cut(line, ":")
		names[name] = true
	}
}

// BenchmarkCopyResponseHeader copies the header of a versitygw GetObject
// answer with two user metadata entries.
func BenchmarkCopyResponseHeader(b *testing.B) {
	src := http.Header{
		"Server": {"VERSITYGW"}, "Date": {"Tue, 01 Dec 2026 16:28:42 GMT"}, "Content-Type": {"binary/octet-stream"},
		"Content-Length": {"2"}, "X-Amz-Request-Id": {"2FZN6G2X8O6GWYJL", "2FZN6G2X8O6GWYJL"},
		"X-Amz-Id-2":     {"hPclsggfJdoGuxxcQTZIv62eZ4ajwI9MD5V90MVwTAn62A9WTV38DaEzshyN5wfKAmL"},
		"X-Amz-Meta-Foo": {"bar"}, "X-Amz-Meta-Mixed": {"x"}, "Etag": {`"49f68a5c8493ec2c0bf489821c21fc3b"`},
		"X-Amz-Checksum-Type": {"FULL_OBJECT"}, "X-Amz-Storage-Class": {"STANDARD"},
		"Last-Modified": {"Tue, 01 Dec 2026 16:28:38 GMT"}, "Accept-Ranges": {"bytes"},
		"X-Amz-Checksum-Crc32": {"2JMqrA=="},
	}
	b.ReportAllocs()
	for b.Loop() {
		dst := make(http.Header, 16)
		copyResponseHeader(dst, src, "S3CONDID")
	}
}

// TestOwnErrorsSpellTheRequestIDAsS3 checks the answers s3cond makes itself
// (a refused signature, an unsigned request, a section over S3's header
// limit): the request ID goes out as S3 spells it, x-amz-request-id.
func TestOwnErrorsSpellTheRequestIDAsS3(t *testing.T) {
	f := newFixture(t, false)
	host := wireHost(f.proxyURL)
	badSignature := &wireRequest{method: http.MethodGet, target: "/" + bucketName + "/key"}
	badSignature.sign(t, host, sigv4.EmptyPayloadHash)
	badSignature.add("X-Amz-Meta-Late", "added after signing")
	for name, c := range map[string]struct {
		raw    []byte
		status int
	}{
		"unsigned":       {(&wireRequest{method: http.MethodGet, target: "/" + bucketName + "/key"}).bytes(host), http.StatusForbidden},
		"bad signature":  {badSignature.bytes(host), http.StatusForbidden},
		"header section": {(&wireRequest{method: http.MethodGet, target: "/x", header: paddingHeaders(9 << 10)}).bytes(host), http.StatusBadRequest},
	} {
		names := rawResponseNamesWithStatus(t, host, c.raw, c.status)
		if !names["x-amz-request-id"] || names["X-Amz-Request-Id"] {
			t.Errorf("%s: response header names %v, want x-amz-request-id only", name, names)
		}
	}
}

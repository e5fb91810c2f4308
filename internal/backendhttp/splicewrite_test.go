package backendhttp

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestRequestHeadReadsBack writes heads of the requests SpliceTransport
// sends and reads them back with net/http's own server-side parser.
func TestRequestHeadReadsBack(t *testing.T) {
	cases := []struct {
		method, rawPath, path, rawQuery string
		length                          int64
	}{
		{method: "GET", rawPath: "/b/k", path: "/b/k"},
		{method: "HEAD", rawPath: "/b/a%20b%2Fc", path: "/b/a b/c", rawQuery: "versionId=1&x"},
		{method: "DELETE", rawPath: "", path: "", rawQuery: "uploadId=u"},
		{method: "PUT", rawPath: "/b/k", path: "/b/k", rawQuery: "partNumber=2&uploadId=x", length: 5},
	}
	for _, tc := range cases {
		t.Run(tc.method+tc.rawPath, func(t *testing.T) {
			req := &http.Request{
				Method: tc.method,
				URL:    &url.URL{Scheme: "http", Host: "store:9000", Path: tc.path, RawPath: tc.rawPath, RawQuery: tc.rawQuery},
				Header: http.Header{
					"X-Amz-Meta-Two": {"a", "b"},
					"Authorization":  {"AWS4-HMAC-SHA256 Credential=x"},
					"Content-Length": {"999"}, // framing is the request's own
				},
				ContentLength: tc.length,
			}
			var payload []byte
			if tc.length > 0 {
				payload = []byte("hello")
				req.Body = io.NopCloser(bytes.NewReader(payload))
			}
			var buf bytes.Buffer
			bw := bufio.NewWriter(&buf)
			if err := writeRequestTo(bw, req, payload); err != nil {
				t.Fatal(err)
			}
			bw.Flush()
			got, err := http.ReadRequest(bufio.NewReader(&buf))
			if err != nil {
				t.Fatalf("%v in %q", err, buf.String())
			}
			wantURI := tc.rawPath
			if wantURI == "" {
				wantURI = "/"
			}
			if tc.rawQuery != "" {
				wantURI += "?" + tc.rawQuery
			}
			body, _ := io.ReadAll(got.Body)
			switch {
			case got.Method != tc.method || got.RequestURI != wantURI || got.Host != "store:9000":
				t.Fatalf("request line %s %s host %s, want %s %s", got.Method, got.RequestURI, got.Host, tc.method, wantURI)
			case strings.Join(got.Header.Values("X-Amz-Meta-Two"), ",") != "a,b" || got.Header.Get("Authorization") == "":
				t.Fatalf("header %v", got.Header)
			case got.ContentLength != tc.length || string(body) != string(payload):
				t.Fatalf("length %d body %q", got.ContentLength, body)
			}
		})
	}
}

func TestRequestHeadRefusesBrokenFraming(t *testing.T) {
	for name, h := range map[string]http.Header{
		"CRLF in a value": {"X-Amz-Meta-A": {"x\r\nInjected: 1"}},
		"LF in a value":   {"X-Amz-Meta-A": {"x\nInjected: 1"}},
		"space in a name": {"X-Amz Meta": {"x"}},
		"colon in a name": {"X:A": {"x"}},
	} {
		req := &http.Request{Method: "GET", URL: &url.URL{Scheme: "http", Host: "h", Path: "/b/k"}, Header: h}
		if _, err := appendRequestHead(nil, req); err == nil {
			t.Errorf("%s: written", name)
		}
	}
}

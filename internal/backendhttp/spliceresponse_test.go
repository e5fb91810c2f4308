package backendhttp

import (
	"bufio"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// plainResponseCases are response heads (with a body after some) as stores
// send them, and ones readPlainResponse must leave to http.ReadResponse.
var plainResponseCases = []struct {
	name, raw, method string
	plain             bool
}{
	{"GET with lower-case x-amz", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nETag: \"e\"\r\nx-amz-request-id: R\r\nx-amz-meta-Odd: v\r\nLast-Modified: Tue, 01 Dec 2026 00:00:00 GMT\r\n\r\nhello", "GET", true},
	{"repeated header", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-A: 1\r\nx-a: 2\r\nX-A: 3\r\n\r\n", "PUT", true},
	{"spaces around values", "HTTP/1.1 404 Not Found\r\nContent-Length:  3 \r\nContent-Type:\tapplication/xml\t\r\nEmpty:\r\n\r\nabc", "GET", true},
	{"HEAD without length", "HTTP/1.1 200 OK\r\nETag: \"e\"\r\n\r\n", "HEAD", true},
	{"HEAD with length", "HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n", "HEAD", true},
	{"204 without length", "HTTP/1.1 204 No Content\r\nx-amz-request-id: R\r\n\r\n", "DELETE", true},
	{"status without reason", "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", "GET", true},
	{"non-ASCII value", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-Amz-Meta-N: caf\xc3\xa9\r\n\r\n", "GET", true},

	{"no length: delimited by close", "HTTP/1.1 200 OK\r\nETag: x\r\n\r\nbody", "GET", false},
	{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", "GET", false},
	{"connection close", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", "GET", false},
	{"folded line", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-A: 1\r\n 2\r\n\r\n", "GET", false},
	{"bare LF", "HTTP/1.1 200 OK\nContent-Length: 0\n\n", "GET", false},
	{"100 continue first", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", "PUT", false},
	{"HTTP/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", "GET", false},
	{"signed length", "HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\nhello", "GET", false},
	{"two lengths", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello", "GET", false},
	{"space in a name", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nBad Name: x\r\n\r\n", "GET", false},
	{"control byte in a value", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-A: a\x01b\r\n\r\n", "GET", false},
	{"incomplete head", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n", "GET", false},
	{"trailer", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nTrailer: X-B\r\n\r\n", "GET", false},
	{"garbage", "SSH-2.0-OpenSSH\r\n\r\n", "GET", false},
}

// TestPlainResponseMatchesReadResponse: where readPlainResponse takes a
// response, it must read what http.ReadResponse reads; where it declines,
// it must leave every byte for http.ReadResponse.
func TestPlainResponseMatchesReadResponse(t *testing.T) {
	for _, tc := range plainResponseCases {
		t.Run(tc.name, func(t *testing.T) {
			req := &http.Request{Method: tc.method}
			br := bufio.NewReaderSize(strings.NewReader(tc.raw), 4096)
			if _, err := br.Peek(1); err != nil {
				t.Fatal(err)
			}
			before := br.Buffered()
			got, ok := readPlainResponse(br, req)
			if ok != tc.plain {
				t.Fatalf("plain = %v, want %v", ok, tc.plain)
			}
			if !ok {
				if br.Buffered() != before {
					t.Fatalf("declined, yet consumed %d bytes", before-br.Buffered())
				}
				return
			}
			want, err := http.ReadResponse(bufio.NewReader(strings.NewReader(tc.raw)), req)
			if err != nil {
				t.Fatalf("http.ReadResponse refuses what readPlainResponse took: %v", err)
			}
			if got.StatusCode != want.StatusCode || got.ContentLength != want.ContentLength || got.Close != want.Close ||
				got.ProtoMajor != want.ProtoMajor || got.ProtoMinor != want.ProtoMinor || got.Request != req {
				t.Fatalf("got %d len %d close %v, want %d len %d close %v", got.StatusCode, got.ContentLength, got.Close, want.StatusCode, want.ContentLength, want.Close)
			}
			if !reflect.DeepEqual(got.Header, want.Header) {
				t.Fatalf("header\n got %q\nwant %q", got.Header, want.Header)
			}
			rest, _ := io.ReadAll(br)
			wantRest := tc.raw[strings.Index(tc.raw, "\r\n\r\n")+4:]
			if string(rest) != wantRest {
				t.Fatalf("left %q after the head, want %q", rest, wantRest)
			}
		})
	}
}

// FuzzPlainResponse checks the same on arbitrary input: readPlainResponse
// never takes what http.ReadResponse would refuse or read differently.
func FuzzPlainResponse(f *testing.F) {
	for _, tc := range plainResponseCases {
		f.Add(tc.raw, tc.method == "HEAD")
	}
	f.Fuzz(func(t *testing.T, raw string, head bool) {
		req := &http.Request{Method: http.MethodGet}
		if head {
			req.Method = http.MethodHead
		}
		br := bufio.NewReaderSize(strings.NewReader(raw), 4096)
		if _, err := br.Peek(1); err != nil {
			return
		}
		before := br.Buffered()
		got, ok := readPlainResponse(br, req)
		if !ok {
			if br.Buffered() != before {
				t.Fatalf("declined, yet consumed input")
			}
			return
		}
		want, err := http.ReadResponse(bufio.NewReader(strings.NewReader(raw)), req)
		if err != nil {
			t.Fatalf("took %q, which http.ReadResponse refuses: %v", raw, err)
		}
		if got.StatusCode != want.StatusCode || got.ContentLength != want.ContentLength || got.Close != want.Close ||
			!reflect.DeepEqual(got.Header, want.Header) {
			t.Fatalf("%q: got %d %d %v %q, want %d %d %v %q", raw, got.StatusCode, got.ContentLength, got.Close, got.Header,
				want.StatusCode, want.ContentLength, want.Close, want.Header)
		}
	})
}

package proxy

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/sigv4"
)

// benchFront is the proxy on a loopback listener in front of a stub backend
// (an httptest server standing for the S3 store, answering every GET with
// the same body and every PUT with an ETag), reached over one kept-alive
// client connection. The per-request cost measured is s3cond's plus the
// stub's and the loopback's, which stay the same between runs.
func benchFront(b *testing.B, getBody []byte) (host string, conn net.Conn, br *bufio.Reader) {
	b.Helper()
	backendServer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			w.Header().Set("Content-Length", fmt.Sprint(len(getBody)))
			w.Header().Set("ETag", `"bench"`)
			_, _ = w.Write(getBody)
		default:
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("ETag", `"bench"`)
		}
	}))
	b.Cleanup(backendServer.Close)
	u, _ := url.Parse(backendServer.URL)
	backend := &Backend{Name: "bench", Endpoint: u, Client: &http.Client{Transport: sigv4.NewResigner(
		NewSpliceTransport(NewBackendTransport()),
		credentials.NewStaticCredentialsProvider("backend", "backend-secret", ""), "us-east-1")}}
	p := New(Options{Auth: sigv4.NewVerifier(staticKeys{}, "us-east-1"), Access: staticKeys{}, Backend: backend, Log: zerolog.Nop()})
	front := httptest.NewServer(p)
	b.Cleanup(front.Close)
	host = wireHost(front.URL)
	conn, err := net.Dial("tcp", host)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	return host, conn, bufio.NewReader(conn)
}

// replay sends one signed request again and again on conn (a header-signed
// request may be replayed within its 15 minutes) and checks each answer.
func replay(b *testing.B, conn net.Conn, br *bufio.Reader, raw []byte, wantBody int) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := conn.Write(raw); err != nil {
			b.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || n != int64(wantBody) {
			b.Fatalf("status %d, %d bytes, err %v", resp.StatusCode, n, err)
		}
	}
}

// BenchmarkForwardGet4KiB is one 4 KiB GetObject through s3cond: verify,
// re-sign, forward, copy the answer back.
func BenchmarkForwardGet4KiB(b *testing.B) {
	body := bytes.Repeat([]byte("g"), 4<<10)
	host, conn, br := benchFront(b, body)
	r := &wireRequest{method: http.MethodGet, target: "/" + bucketName + "/key"}
	r.sign(b, host, emptySHA256)
	replay(b, conn, br, r.bytes(host), len(body))
}

// BenchmarkForwardPut4KiB is one 4 KiB PutObject signed over its SHA-256.
func BenchmarkForwardPut4KiB(b *testing.B) {
	host, conn, br := benchFront(b, nil)
	r := signedWirePut(b, host, "key", bytes.Repeat([]byte("p"), 4<<10))
	replay(b, conn, br, r.bytes(host), 0)
}

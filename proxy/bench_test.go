package proxy

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/internal/backendhttp"
	"github.com/s3cond/s3cond/internal/frontconn"
	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/sigv4"
)

// benchFront is the proxy on a loopback listener in front of a stub backend
// (a raw TCP server standing for the S3 store, answering every GET with the
// same body and every other request with an ETag), reached over one
// kept-alive client connection. Stub and client allocate nothing per
// request, so allocs/op is s3cond's own.
func benchFront(b testing.TB, getBody []byte) (host string, conn net.Conn, br *bufio.Reader) {
	return benchFrontLogged(b, getBody, zerolog.Nop(), nil)
}

// benchFrontLogged is benchFront with an access log written to log, and
// the backend's settings changed by tune (nil: none).
func benchFrontLogged(b testing.TB, getBody []byte, log zerolog.Logger, tune func(*Backend)) (host string, conn net.Conn, br *bufio.Reader) {
	b.Helper()
	u := rawStubBackend(b, getBody)
	backend := &Backend{Name: "bench", Endpoint: u, Client: &http.Client{Transport: sigv4.NewResigner(
		backendhttp.NewSpliceTransport(backendhttp.NewBackendTransport()),
		credentials.NewStaticCredentialsProvider("backend", "backend-secret", ""), "us-east-1")}}
	if tune != nil {
		tune(backend)
	}
	p := New(Options{Auth: sigv4.NewVerifier(staticKeys{}, "us-east-1"), Access: staticKeys{}, Backend: backend, Log: log})
	// Accepted as app.Serve accepts: connections that can hold a small
	// answer back and send it in one write.
	front := httptest.NewUnstartedServer(p)
	front.Listener = frontconn.Listener{Listener: front.Listener}
	front.Config.ConnContext = frontconn.NewContext
	front.Start()
	b.Cleanup(front.Close)
	host = wireHost(front.URL)
	conn, err := net.Dial("tcp", host)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	return host, conn, bufio.NewReader(conn)
}

// rawStubBackend serves HTTP/1.1 keep-alive connections with fixed answers,
// reading each request head into a reused buffer and discarding its body.
func rawStubBackend(b testing.TB, getBody []byte) *url.URL {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	getAnswer := append([]byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\nETag: \"bench\"\r\n\r\n", len(getBody))), getBody...)
	otherAnswer := []byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nETag: \"bench\"\r\n\r\n")
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReaderSize(c, 64<<10)
				for {
					isGet, length, err := readRawHead(br)
					if err != nil {
						return
					}
					if _, err := br.Discard(int(length)); err != nil {
						return
					}
					answer := otherAnswer
					if isGet {
						answer = getAnswer
					}
					if _, err := c.Write(answer); err != nil {
						return
					}
				}
			}()
		}
	}()
	return &url.URL{Scheme: "http", Host: ln.Addr().String()}
}

// readRawHead reads one HTTP message head from br without allocating and
// returns whether its start line is a GET request and its Content-Length.
func readRawHead(br *bufio.Reader) (isGet bool, contentLength int64, err error) {
	first := true
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return false, 0, err
		}
		if first {
			isGet, first = bytes.HasPrefix(line, []byte("GET ")), false
			continue
		}
		if len(line) <= 2 {
			return isGet, contentLength, nil
		}
		const name = "content-length:"
		if len(line) > len(name) && bytes.EqualFold(line[:len(name)], []byte(name)) {
			for _, c := range bytes.TrimSpace(line[len(name):]) {
				contentLength = contentLength*10 + int64(c-'0')
			}
		}
	}
}

// replay sends one signed request again and again on conn (a header-signed
// request may be replayed within its 15 minutes) and checks each answer.
func replay(b *testing.B, conn net.Conn, br *bufio.Reader, raw []byte, wantBody int) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		replayOnce(b, conn, br, raw, wantBody)
	}
}

// replayOnce sends raw once on conn and reads and checks its answer,
// allocating nothing itself.
func replayOnce(t testing.TB, conn net.Conn, br *bufio.Reader, raw []byte, wantBody int) {
	if _, err := conn.Write(raw); err != nil {
		t.Fatal(err)
	}
	status, err := br.Peek(12)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(status[9:12], []byte("200")) {
		t.Fatalf("status line %q", status)
	}
	_, length, err := readRawHead(br)
	if err != nil || length != int64(wantBody) {
		t.Fatalf("%d body bytes, err %v; want %d", length, err, wantBody)
	}
	if _, err := br.Discard(int(length)); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkForwardGet4KiB is one 4 KiB GetObject through s3cond: verify,
// re-sign, forward, copy the answer back.
func BenchmarkForwardGet4KiB(b *testing.B) {
	body := bytes.Repeat([]byte("g"), 4<<10)
	host, conn, br := benchFront(b, body)
	r := &wireRequest{method: http.MethodGet, target: "/" + bucketName + "/key"}
	r.sign(b, host, sigv4.EmptyPayloadHash)
	replay(b, conn, br, r.bytes(host), len(body))
}

// BenchmarkForwardGet4KiBAccessLog is BenchmarkForwardGet4KiB with the
// access log on (level info, written to io.Discard): the cost of one line
// per request.
func BenchmarkForwardGet4KiBAccessLog(b *testing.B) {
	body := bytes.Repeat([]byte("g"), 4<<10)
	host, conn, br := benchFrontLogged(b, body, zerolog.New(io.Discard).Level(zerolog.InfoLevel), nil)
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

// BenchmarkForwardPut4KiBFramed is BenchmarkForwardPut4KiB with the body
// framed (backend.conditional_body_framing, on by default where the store
// honours it): the cost framing adds to an unconditional PUT.
func BenchmarkForwardPut4KiBFramed(b *testing.B) {
	host, conn, br := benchFrontLogged(b, nil, zerolog.Nop(), func(be *Backend) { be.FramedBodies = true })
	r := signedWirePut(b, host, "key", bytes.Repeat([]byte("p"), 4<<10))
	replay(b, conn, br, r.bytes(host), 0)
}

// BenchmarkForwardPut1MiB and BenchmarkForwardPut1MiBFramed: the same for
// a body that streams (larger than s3cond reads whole), where framing
// adds a CRC32 pass and chunk headers every 64 KiB.
func BenchmarkForwardPut1MiB(b *testing.B) {
	host, conn, br := benchFront(b, nil)
	r := signedWirePut(b, host, "key", bytes.Repeat([]byte("p"), 1<<20))
	b.SetBytes(1 << 20)
	replay(b, conn, br, r.bytes(host), 0)
}

func BenchmarkForwardPut1MiBFramed(b *testing.B) {
	host, conn, br := benchFrontLogged(b, nil, zerolog.Nop(), func(be *Backend) { be.FramedBodies = true })
	r := signedWirePut(b, host, "key", bytes.Repeat([]byte("p"), 1<<20))
	b.SetBytes(1 << 20)
	replay(b, conn, br, r.bytes(host), 0)
}

// BenchmarkBackendHead is the HEAD a conditional write makes, twice, to
// read the object's current state.
func BenchmarkBackendHead(b *testing.B) {
	u := rawStubBackend(b, nil)
	backend := &Backend{Name: "bench", Endpoint: u, Client: &http.Client{Transport: sigv4.NewResigner(
		backendhttp.NewSpliceTransport(backendhttp.NewBackendTransport()),
		credentials.NewStaticCredentialsProvider("backend", "backend-secret", ""), "us-east-1")}}
	ctx := context.Background()
	tgt := operation.Target{Bucket: bucketName, Key: "key", RawKey: "key"}
	b.ReportAllocs()
	for b.Loop() {
		state, err := backend.head(ctx, tgt)
		if err != nil || !state.Exists {
			b.Fatalf("head: %+v, %v", state, err)
		}
	}
}

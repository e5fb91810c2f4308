package proxy

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// stallUpload sends a signed PUT of size bytes but only its head and the
// first sent bytes of the body, then stops sending (the connection stays
// open), and returns the answer and how long it took.
func stallUpload(t *testing.T, proxyURL, key string, size, sent int, header ...[2]string) (*wireExchange, time.Duration) {
	t.Helper()
	host := wireHost(proxyURL)
	raw := signedWirePut(t, host, key, bytes.Repeat([]byte("s"), size), header...).bytes(host)
	conn, err := net.DialTimeout("tcp", host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(15 * time.Second))
	start := time.Now()
	if _, err := conn.Write(raw[:len(raw)-size+sent]); err != nil {
		t.Fatal(err)
	}
	ex := &wireExchange{conn: conn, reader: bufio.NewReader(conn)}
	ex.read(t, nil)
	return ex, time.Since(start)
}

func TestStalledBodyIsRequestTimeoutAndStoresNothing(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{bodyIdleTimeout: 300 * time.Millisecond})
	cases := []struct {
		name   string
		size   int
		header [][2]string
	}{
		{"streamed PUT", 200 << 10, nil},
		{"small PUT", 4 << 10, nil},
		{"conditional streamed PUT", 200 << 10, [][2]string{{"If-None-Match", "*"}}},
		{"conditional small PUT", 4 << 10, [][2]string{{"If-None-Match", "*"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key := "stalled-" + strings.ReplaceAll(c.name, " ", "-")
			ex, took := stallUpload(t, f.proxyURL, key, c.size, c.size/2, c.header...)
			ex.wantS3Error(t, http.StatusBadRequest, "RequestTimeout")
			if took > 5*time.Second {
				t.Errorf("answered after %s, want about the 300 ms timeout", took)
			}
			f.wantNotStored(t, key)
			// The lease, if any, is free: a conditional create succeeds at once.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_, err := f.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucketName), Key: aws.String(key),
				Body: strings.NewReader("after"), IfNoneMatch: aws.String("*")})
			if err != nil {
				t.Fatalf("conditional create after the stalled one: %v", err)
			}
		})
	}
}

func TestSlowButSteadyBodyIsNotCut(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{bodyIdleTimeout: 300 * time.Millisecond})
	// 8 pieces 100 ms apart: the whole body takes longer than the timeout,
	// no pause does.
	body := &pacedReader{data: bytes.Repeat([]byte("p"), 8<<10), piece: 1 << 10, pause: 100 * time.Millisecond}
	host := wireHost(f.proxyURL)
	r := &wireRequest{method: http.MethodPut, target: "/" + bucketName + "/paced", header: [][2]string{{"Content-Length", "8192"}}}
	r.sign(t, host, "UNSIGNED-PAYLOAD")
	req, _ := http.NewRequest(http.MethodPut, f.proxyURL+r.target, body)
	req.ContentLength = 8 << 10
	for _, h := range r.header {
		if h[0] != "Content-Length" {
			req.Header.Add(h[0], h[1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("paced upload: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("paced upload: status %d", resp.StatusCode)
	}
	if got, err := f.get(t, "paced"); err != nil || len(got) != 8<<10 {
		t.Fatalf("paced object: %d bytes, %v", len(got), err)
	}
}

// pacedReader stands for a slow client: piece bytes, then a pause.
type pacedReader struct {
	data  []byte
	piece int
	pause time.Duration
	began bool
}

func (p *pacedReader) Read(b []byte) (int, error) {
	if len(p.data) == 0 {
		return 0, io.EOF
	}
	if p.began {
		time.Sleep(p.pause)
	}
	p.began = true
	n := copy(b[:min(len(b), p.piece)], p.data)
	p.data = p.data[n:]
	return n, nil
}

func TestClientThatStopsReadingIsCutOff(t *testing.T) {
	observer := &recordingObserver{}
	f := newFixtureWith(t, fixtureOptions{writeIdleTimeout: 300 * time.Millisecond, observer: observer})
	const size = 32 << 20 // more than the socket buffers on both sides hold
	if _, err := f.put(t, "big", strings.Repeat("b", size), nil); err != nil {
		t.Fatal(err)
	}
	host := wireHost(f.proxyURL)
	r := &wireRequest{method: http.MethodGet, target: "/" + bucketName + "/big"}
	r.sign(t, host, emptySHA256)
	dialer := net.Dialer{Timeout: 5 * time.Second}
	conn, err := dialer.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write(r.bytes(host)); err != nil {
		t.Fatal(err)
	}
	// The client reads nothing until s3cond has given up on the GET (the
	// write idle timeout ended it) ...
	observer.records.WaitFor(t, "the stalled GET to end", func(r RequestRecord) bool { return r.Operation == "GetObject" })
	// ... and then finds the response cut off.
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	began := time.Now()
	n, err := io.Copy(io.Discard, conn)
	t.Logf("read %d bytes in %s: %v", n, time.Since(began), err)
	if n >= size {
		t.Fatalf("the client got all %d bytes after stalling; want the connection cut", n)
	}
}

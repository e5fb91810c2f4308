package proxy

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// recordStream hands every request record to the test as it is reported,
// so a test waits for the record it expects instead of polling.
type recordStream chan RequestRecord

func (s recordStream) ObserveRequest(r RequestRecord) { s <- r }

// next returns the first record for op, or fails after a generous bound.
func (s recordStream) next(t *testing.T, op string) RequestRecord {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case r := <-s:
			if r.Operation == op {
				return r
			}
		case <-timeout:
			t.Fatalf("no %s request was reported", op)
		}
	}
}

// TestClientHangUpIsNotAServerError cancels GETs from the client side,
// before the backend answered and in the middle of the body: each is
// reported with status 499 (nginx's "client closed request"), not as the
// 500 InternalError an alert on 5xx would page on.
func TestClientHangUpIsNotAServerError(t *testing.T) {
	backendGot := make(chan struct{}, 1)
	records := make(recordStream, 64)
	f := newFixtureWith(t, fixtureOptions{observer: records, backendHook: func(r *http.Request) {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/stalled") {
			backendGot <- struct{}{}
			<-r.Context().Done() // the backend stalls until s3cond gives up on it
		}
	}})
	// 16 MiB, against at most 4 MiB in s3cond's send buffer (tcp_wmem's
	// ceiling) and 64 KiB in the reader's (smallReceiveBuffer): a body
	// the size of the loopback's autotuned receive buffer (up to 32 MiB
	// under tcp_rmem) would be taken whole before the reader hangs up.
	big := strings.Repeat("0123456789abcdef", 1<<20)
	for _, key := range []string{"stalled", "big"} {
		if _, err := f.put(t, key, big, nil); err != nil {
			t.Fatalf("put %s: %v", key, err)
		}
	}

	t.Run("before the backend answered", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := f.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucketName), Key: aws.String("stalled")})
			done <- err
		}()
		<-backendGot
		cancel()
		<-done
		if r := records.next(t, "GetObject"); r.Status != StatusClientClosedRequest {
			t.Fatalf("reported status %d, want %d", r.Status, StatusClientClosedRequest)
		}
	})

	t.Run("in the middle of the body", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		out, err := f.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucketName), Key: aws.String("big")},
			func(o *s3.Options) { o.HTTPClient = smallReceiveBufferClient() })
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(out.Body, make([]byte, 4096)); err != nil {
			t.Fatal(err)
		}
		cancel()
		out.Body.Close()
		r := records.next(t, "GetObject")
		if r.Status != StatusClientClosedRequest {
			t.Fatalf("reported status %d, want %d", r.Status, StatusClientClosedRequest)
		}
		if r.BytesOut >= int64(len(big)) {
			t.Fatalf("reported %d bytes sent of %d: the body was not cut", r.BytesOut, len(big))
		}
	})

	t.Run("a GET read to its end", func(t *testing.T) {
		if got, err := f.get(t, "big"); err != nil || len(got) != len(big) {
			t.Fatalf("get = %d bytes, %v", len(got), err)
		}
		if r := records.next(t, "GetObject"); r.Status != http.StatusOK {
			t.Fatalf("reported status %d, want 200", r.Status)
		}
	})
}

// smallReceiveBufferClient reads over connections whose receive buffer is
// fixed at 64 KiB (a fixed SO_RCVBUF turns the kernel's autotuning off),
// so a reader that stops reading holds the sender back at once.
func smallReceiveBufferClient() *http.Client {
	dialer := &net.Dialer{Control: func(_, _ string, raw syscall.RawConn) error {
		var setErr error
		if err := raw.Control(func(fd uintptr) {
			setErr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 64<<10)
		}); err != nil {
			return err
		}
		return setErr
	}}
	return &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}}
}

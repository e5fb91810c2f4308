package backendhttp

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// closeAndRead dials a loopback listener with dial, closes the connection
// from the dialling side, and returns what the accepting side's read then
// gets.
func closeAndRead(t *testing.T, dial func(ctx context.Context, network, addr string) (net.Conn, error)) error {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := dial(ctx, "tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	conn.Close()
	_ = server.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = server.Read(make([]byte, 1))
	return err
}

// A backend sees a connection s3cond cuts off as reset, not as a clean end
// it could take for the end of a body.
func TestResettingDialerEndsConnectionsWithAReset(t *testing.T) {
	err := closeAndRead(t, ResettingDialer(&net.Dialer{}))
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("the server read %v, want a connection reset", err)
	}
	// The control: a plain dialer's close is a FIN, read as a clean end.
	if err := closeAndRead(t, (&net.Dialer{}).DialContext); err != io.EOF {
		t.Fatalf("plain dialer: the server read %v, want io.EOF", err)
	}
}

func TestNewBackendTransportDialsResettingConnections(t *testing.T) {
	tr := NewBackendTransport()
	if !tr.DisableCompression {
		t.Error("compression on: the backend's bodies and ETags must pass untouched")
	}
	if err := closeAndRead(t, tr.DialContext); !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("the server read %v, want a connection reset", err)
	}
}

package embedded

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"syscall"
)

// memListener is a net.Listener with no socket: connections exist only
// between Dial, called by s3cond's backend transport in this process, and
// the store's http.Server. No other process can reach the store, because
// there is no port or path to reach it by (the store checks no signatures,
// so a loopback port would let any local process bypass s3cond's keys,
// grants and leases).
type memListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

// memAddr names both ends of an in-memory connection.
type memAddr struct{}

func (memAddr) Network() string { return "memory" }
func (memAddr) String() string  { return "embedded-store" }

func newMemListener() *memListener {
	return &memListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *memListener) Addr() net.Addr { return memAddr{} }

// errConnReset is what the store reads when s3cond closes a connection
// mid-request: as with a TCP reset (s3cond's backend connections close
// with SO_LINGER 0), never a clean end, so a body cut short before its
// final byte can never pass for a complete one.
var errConnReset = &net.OpError{Op: "read", Net: "memory", Err: syscall.ECONNRESET}

// Dial connects to the store. Its signature is http.Transport.DialContext's;
// network and address are ignored, there being one store.
func (l *memListener) Dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- resetOnClose{Conn: server}:
		return client, nil
	case <-l.closed:
		return nil, &net.OpError{Op: "dial", Net: "memory", Err: errors.New("the embedded store is closed")}
	case <-ctx.Done():
		return nil, &net.OpError{Op: "dial", Net: "memory", Err: ctx.Err()}
	}
}

// resetOnClose is the store's end of a connection: once s3cond has closed
// its end (how it aborts a request), reads fail with a reset, not io.EOF.
type resetOnClose struct {
	net.Conn
}

func (c resetOnClose) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if errors.Is(err, io.EOF) {
		return n, errConnReset
	}
	return n, err
}

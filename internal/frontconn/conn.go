// Package frontconn is the client side's TCP connection, able to hold its
// writes back so that a small answer leaves in one system call.
//
// Why: net/http's server writes through a fixed 4 KiB buffer, so the answer
// to a 4 KiB GET (head and body, just over 4 KiB) left in two writes, and
// on loopback each write also pays the receiving side's TCP work. A handler
// that knows its whole answer is small holds the connection's writes while
// it writes head and body and flushes, then releases them as one write.
package frontconn

import (
	"container/list"
	"context"
	"io"
	"net"
	"sync"
	"time"
)

// MaxHeld bounds what a connection holds back: an answer that grows past
// it leaves as it comes, from there on.
const MaxHeld = 16 << 10

// Conn is an accepted client connection. net/http's server writes to it
// from the goroutine serving it, and may write a "100 Continue" from the
// one reading the request body, hence the lock.
type Conn struct {
	*net.TCPConn
	mu   sync.Mutex
	held *[]byte // nil unless holding
	// release gives a CappedListener's slot back on Close (cap.go).
	release     func()
	releaseOnce sync.Once
	// book is the CappedListener's record of the connection (source.go):
	// its source address, whether it counts as unauthenticated there, its
	// place among the idle connections, whether it is closed. Guarded by
	// book.mu.
	book            *sourceBook
	source          string
	unauthenticated bool
	idleSince       *list.Element
	gone            bool
	// refused marks a connection accepted past the cap; its deadlines
	// never pass hardDeadline.
	refused      bool
	hardDeadline time.Time
}

// Write sends p, or appends it to the held bytes while holding.
func (c *Conn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held == nil {
		return c.TCPConn.Write(p)
	}
	*c.held = append(*c.held, p...)
	if len(*c.held) > MaxHeld {
		if err := c.releaseLocked(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// ReadFrom sends what is held, then hands src to the TCP connection's own
// ReadFrom (which splices from a socket).
func (c *Conn) ReadFrom(src io.Reader) (int64, error) {
	if err := c.Release(); err != nil {
		return 0, err
	}
	return c.TCPConn.ReadFrom(src)
}

// Hold starts holding writes back, until Release.
func (c *Conn) Hold() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held == nil {
		c.held = heldBuffers.Get().(*[]byte)
	}
}

// Release ends holding and sends what was held in one write. A failed write
// closes the connection: net/http believes the held bytes sent, and must
// not answer another request on it.
func (c *Conn) Release() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.releaseLocked()
}

func (c *Conn) releaseLocked() error {
	held := c.held
	if held == nil {
		return nil
	}
	c.held = nil
	var err error
	if len(*held) > 0 {
		if _, err = c.TCPConn.Write(*held); err != nil {
			_ = c.TCPConn.Close()
		}
	}
	if cap(*held) <= heldBufferSize { // one grown by a large write is not kept
		*held = (*held)[:0]
		heldBuffers.Put(held)
	}
	return err
}

// heldBufferSize fits MaxHeld and the write that crosses it (net/http's
// server writes through a 4 KiB buffer).
const heldBufferSize = MaxHeld + 4<<10

var heldBuffers = sync.Pool{New: func() any { b := make([]byte, 0, heldBufferSize); return &b }}

// Listener wraps accepted TCP connections in Conn.
type Listener struct{ net.Listener }

// Accept returns the next connection, as a *Conn when it is TCP.
func (l Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		return &Conn{TCPConn: tc}, nil
	}
	return c, err
}

type connKey struct{}

// tcpKey carries the *Conn under a request's connection, TLS or not.
type tcpKey struct{}

// NewContext returns ctx carrying c, for http.Server's ConnContext.
func NewContext(ctx context.Context, c net.Conn) context.Context {
	if fc, ok := c.(*Conn); ok {
		ctx = context.WithValue(ctx, connKey{}, fc)
	}
	if fc := underlyingConn(c); fc != nil {
		ctx = context.WithValue(ctx, tcpKey{}, fc)
	}
	return ctx
}

// tcpFromContext returns the request's TCP connection, under TLS too.
func tcpFromContext(ctx context.Context) *Conn {
	c, _ := ctx.Value(tcpKey{}).(*Conn)
	return c
}

// FromContext returns the request's connection, or nil when it cannot hold
// (a TLS connection, a test's recorder).
func FromContext(ctx context.Context) *Conn {
	c, _ := ctx.Value(connKey{}).(*Conn)
	return c
}

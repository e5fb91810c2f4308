package frontconn

import (
	"context"
	"net"
	"sync"
	"time"
)

// Bounds of the connection cap (docs/security.md, "Connection caps").
const (
	// DefaultMaxConnections is the cap when none is configured.
	DefaultMaxConnections = 4096
	// MaxRefusing is how many connections past the cap may be open at once
	// to be told 503 SlowDown; past that, new connections wait in the
	// kernel's accept queue until one closes.
	MaxRefusing = 64
	// RefusalDeadline is all the time a connection past the cap gets: to
	// send its request head and read the 503.
	RefusalDeadline = 5 * time.Second
)

// CappedListener is a Listener that keeps at most max connections open.
// A connection accepted past the cap is marked refused (Refused): the
// server answers its request 503 SlowDown and closes it, all within
// RefusalDeadline. At most MaxRefusing are refused at once; while they
// are, Accept waits for a slot, leaving new connections in the kernel's
// accept queue.
type CappedListener struct {
	net.Listener
	slots, refusing chan struct{}
	closed          chan struct{}
	closeOnce       sync.Once
}

// NewCappedListener caps inner at max open connections (<= 0:
// DefaultMaxConnections).
func NewCappedListener(inner net.Listener, max int) *CappedListener {
	if max <= 0 {
		max = DefaultMaxConnections
	}
	return &CappedListener{Listener: inner, slots: make(chan struct{}, max),
		refusing: make(chan struct{}, MaxRefusing), closed: make(chan struct{})}
}

// Accept returns the next connection, a *Conn for TCP, holding a slot
// until it is closed.
func (l *CappedListener) Accept() (net.Conn, error) {
	c, err := Listener{l.Listener}.Accept()
	if err != nil {
		return c, err
	}
	fc, ok := c.(*Conn)
	if !ok {
		return c, nil // not TCP (no server of s3cond's): nothing to count
	}
	select {
	case l.slots <- struct{}{}:
		fc.release = l.releaseSlot
		return fc, nil
	default:
	}
	select {
	case l.slots <- struct{}{}:
		fc.release = l.releaseSlot
	case l.refusing <- struct{}{}:
		fc.release = l.releaseRefusing
		fc.refuse(time.Now().Add(RefusalDeadline))
	case <-l.closed:
		_ = fc.TCPConn.Close()
		return nil, net.ErrClosed
	}
	return fc, nil
}

// Close stops accepting, and unblocks an Accept waiting for a slot.
func (l *CappedListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

func (l *CappedListener) releaseSlot()     { <-l.slots }
func (l *CappedListener) releaseRefusing() { <-l.refusing }

// refuse marks c as past the cap: every deadline set on it is clamped to
// hard, whatever net/http or the proxy sets (ReadHeaderTimeout is 30 s).
func (c *Conn) refuse(hard time.Time) {
	c.refused, c.hardDeadline = true, hard
	_ = c.TCPConn.SetDeadline(hard)
}

func (c *Conn) clamp(t time.Time) time.Time {
	if c.refused && (t.IsZero() || t.After(c.hardDeadline)) {
		return c.hardDeadline
	}
	return t
}

// SetDeadline sets the connection's deadlines (clamped when refused).
func (c *Conn) SetDeadline(t time.Time) error { return c.TCPConn.SetDeadline(c.clamp(t)) }

// SetReadDeadline sets the read deadline (clamped when refused).
func (c *Conn) SetReadDeadline(t time.Time) error { return c.TCPConn.SetReadDeadline(c.clamp(t)) }

// SetWriteDeadline sets the write deadline (clamped when refused).
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.TCPConn.SetWriteDeadline(c.clamp(t)) }

// Close closes the connection and gives its slot back, once.
func (c *Conn) Close() error {
	if c.release != nil {
		c.releaseOnce.Do(c.release)
	}
	return c.TCPConn.Close()
}

type refusedKey struct{}

// Refused reports whether the request's connection was accepted past the
// cap, and must be answered 503 SlowDown and closed.
func Refused(ctx context.Context) bool {
	if c := FromContext(ctx); c != nil {
		return c.refused
	}
	refused, _ := ctx.Value(refusedKey{}).(bool)
	return refused
}

// refusedTLS marks the context of a TLS connection whose TCP connection
// was refused (a TLS connection cannot hold, so it has no connKey).
func refusedTLS(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(interface{ NetConn() net.Conn }); ok {
		if fc, ok := tc.NetConn().(*Conn); ok && fc.refused {
			return context.WithValue(ctx, refusedKey{}, true)
		}
	}
	return ctx
}

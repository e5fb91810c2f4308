package frontconn

import (
	"context"
	"net"
	"sync"
	"time"
)

// Bounds of the connection cap (docs/security.md, "Bounds per source and
// stage").
const (
	// DefaultMaxConnections is the cap when none is configured.
	DefaultMaxConnections = 4096
	// DefaultMaxUnauthenticatedPerSource is the per-address cap on
	// connections none of whose requests has authenticated yet, when none
	// is configured.
	DefaultMaxUnauthenticatedPerSource = 512
	// MaxRefusing is how many connections past the cap may be open at once
	// to be told 503 SlowDown; past that, new connections wait in the
	// kernel's accept queue until one closes.
	MaxRefusing = 64
	// RefusalDeadline is all the time a connection past the cap gets: to
	// send its request head and read the 503.
	RefusalDeadline = 5 * time.Second
)

// Limits bound what a CappedListener keeps open.
type Limits struct {
	// MaxConnections caps the open connections (<= 0:
	// DefaultMaxConnections).
	MaxConnections int
	// MaxUnauthenticatedPerSource caps, per client address (an IPv6
	// client's /64), the open connections that have carried no
	// authenticated request yet, those still sending their first header
	// included (<= 0: DefaultMaxUnauthenticatedPerSource). Past it a new
	// connection from that address is closed at once.
	MaxUnauthenticatedPerSource int
	// Closed, when set, is told each connection the cap closes or refuses,
	// by reason (ClosedIdle, ClosedAddressCap, RefusedPastCap), for
	// metrics. It is called from Accept, so it must not block.
	Closed func(reason string)
}

// Reasons the cap closes or refuses a connection (Limits.Closed).
const (
	// ClosedIdle: the connection idle longest, closed for a new one.
	ClosedIdle = "idle_shed"
	// ClosedAddressCap: a new connection from an address holding its
	// share of unauthenticated connections, closed unanswered.
	ClosedAddressCap = "address_cap"
	// RefusedPastCap: a new connection past the cap with none idle,
	// answered 503 and closed.
	RefusedPastCap = "refused"
)

// CappedListener is a Listener that keeps at most Limits.MaxConnections
// connections open. When they are all open, the connection that has been
// idle longest (a keep-alive connection between requests, as the
// server's ConnState hook reports) is closed to make room; only when none
// is idle is a new connection marked refused (Refused): the server answers
// its request 503 SlowDown and closes it, all within RefusalDeadline. At
// most MaxRefusing are refused at once; while they are, Accept waits for a
// slot, leaving new connections in the kernel's accept queue. One address
// holds at most Limits.MaxUnauthenticatedPerSource connections that have
// not authenticated (Authenticated), so one client cannot fill the cap.
type CappedListener struct {
	net.Listener
	slots, refusing chan struct{}
	closed          chan struct{}
	closeOnce       sync.Once
	sources         sourceBook
	onClosed        func(reason string)
}

// NewCappedListener caps inner by limits.
func NewCappedListener(inner net.Listener, limits Limits) *CappedListener {
	if limits.MaxConnections <= 0 {
		limits.MaxConnections = DefaultMaxConnections
	}
	if limits.MaxUnauthenticatedPerSource <= 0 {
		limits.MaxUnauthenticatedPerSource = DefaultMaxUnauthenticatedPerSource
	}
	return &CappedListener{Listener: inner, slots: make(chan struct{}, limits.MaxConnections),
		refusing: make(chan struct{}, MaxRefusing), closed: make(chan struct{}),
		sources: newSourceBook(limits.MaxUnauthenticatedPerSource), onClosed: limits.Closed}
}

func (l *CappedListener) count(reason string) {
	if l.onClosed != nil {
		l.onClosed(reason)
	}
}

// Accept returns the next connection, a *Conn for TCP, holding a slot
// until it is closed. A connection from an address already holding its
// share of unauthenticated connections is closed unanswered, and the next
// one accepted.
func (l *CappedListener) Accept() (net.Conn, error) {
	for {
		c, err := Listener{l.Listener}.Accept()
		if err != nil {
			return c, err
		}
		fc, ok := c.(*Conn)
		if !ok {
			return c, nil // not TCP (no server of s3cond's): nothing to count
		}
		if !l.sources.admit(fc) {
			_ = fc.TCPConn.Close()
			l.count(ClosedAddressCap)
			continue
		}
		return l.takeSlot(fc)
	}
}

// takeSlot gives fc a slot: a free one, or the one of the connection idle
// longest, or else marks it refused.
func (l *CappedListener) takeSlot(fc *Conn) (net.Conn, error) {
	if l.trySlot(fc) {
		return fc, nil
	}
	if oldest := l.sources.popOldestIdle(); oldest != nil {
		// Its Close gives its slot back; a client's keep-alive
		// connection closed between requests is reopened by the client.
		_ = oldest.Close()
		l.count(ClosedIdle)
		if l.trySlot(fc) {
			return fc, nil
		}
	}
	select {
	case l.slots <- struct{}{}:
		fc.release = l.releaseSlot
	case l.refusing <- struct{}{}:
		fc.release = l.releaseRefusing
		fc.refuse(time.Now().Add(RefusalDeadline))
		l.count(RefusedPastCap)
	case <-l.closed:
		l.sources.forget(fc)
		_ = fc.TCPConn.Close()
		return nil, net.ErrClosed
	}
	return fc, nil
}

func (l *CappedListener) trySlot(fc *Conn) bool {
	select {
	case l.slots <- struct{}{}:
		fc.release = l.releaseSlot
		return true
	default:
		return false
	}
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

// Close closes the connection and gives its slot and its address's share
// back, once.
func (c *Conn) Close() error {
	c.releaseOnce.Do(func() {
		if c.book != nil {
			c.book.forget(c)
		}
		if c.release != nil {
			c.release()
		}
	})
	return c.TCPConn.Close()
}

// Refused reports whether the request's connection was accepted past the
// cap, and must be answered 503 SlowDown and closed.
func Refused(ctx context.Context) bool {
	c := tcpFromContext(ctx)
	return c != nil && c.refused
}

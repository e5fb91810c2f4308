package frontconn

import (
	"container/list"
	"context"
	"net"
	"net/http"
	"net/netip"
	"sync"
)

// sourceBook keeps, for a CappedListener, what the cap needs to attribute
// connections: per client address, how many have not authenticated; and
// which connections are idle between requests, oldest first.
type sourceBook struct {
	mu                 sync.Mutex
	maxUnauthenticated int
	unauthenticated    map[string]int
	idle               *list.List // of *Conn, in the order they became idle
}

func newSourceBook(maxPerSource int) sourceBook {
	return sourceBook{maxUnauthenticated: maxPerSource, unauthenticated: map[string]int{}, idle: list.New()}
}

// admit counts c against its address's unauthenticated connections, or
// reports that the address has its share open already.
func (b *sourceBook) admit(c *Conn) bool {
	source := Source(c.RemoteAddr().String())
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.unauthenticated[source] >= b.maxUnauthenticated {
		return false
	}
	b.unauthenticated[source]++
	c.book, c.source, c.unauthenticated = b, source, true
	return true
}

// authenticated stops counting c against its address.
func (b *sourceBook) authenticated(c *Conn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.uncountLocked(c)
}

func (b *sourceBook) uncountLocked(c *Conn) {
	if !c.unauthenticated {
		return
	}
	c.unauthenticated = false
	if b.unauthenticated[c.source]--; b.unauthenticated[c.source] <= 0 {
		delete(b.unauthenticated, c.source)
	}
}

// forget drops c, closed, from the book.
func (b *sourceBook) forget(c *Conn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.uncountLocked(c)
	c.gone = true
	if c.idleSince != nil {
		b.idle.Remove(c.idleSince)
		c.idleSince = nil
	}
}

// setIdle records whether c waits between requests.
func (b *sourceBook) setIdle(c *Conn, idle bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case c.gone:
	case idle && c.idleSince == nil:
		c.idleSince = b.idle.PushBack(c)
	case !idle && c.idleSince != nil:
		b.idle.Remove(c.idleSince)
		c.idleSince = nil
	}
}

// popOldestIdle takes the connection idle longest off the idle list; the
// caller closes it.
func (b *sourceBook) popOldestIdle() *Conn {
	b.mu.Lock()
	defer b.mu.Unlock()
	front := b.idle.Front()
	if front == nil {
		return nil
	}
	c := b.idle.Remove(front).(*Conn)
	c.idleSince = nil
	return c
}

// ConnState is the http.Server's ConnState hook of a server on l: it
// tells l which connections are idle, for shedding the oldest first.
func (l *CappedListener) ConnState(nc net.Conn, state http.ConnState) {
	if c := underlyingConn(nc); c != nil && c.book == &l.sources {
		l.sources.setIdle(c, state == http.StateIdle)
	}
}

// Authenticated records that a request on ctx's connection passed
// signature or policy verification: the connection no longer counts
// against its address's unauthenticated connections.
func Authenticated(ctx context.Context) {
	if c := tcpFromContext(ctx); c != nil && c.book != nil {
		c.book.authenticated(c)
	}
}

// Source is the client address a remote address ("host:port") is counted
// under: its IP, or for IPv6 its /64, which one client usually holds
// whole. An address that does not parse is its own source.
func Source(remoteAddr string) string {
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return remoteAddr
	}
	addr := ap.Addr().Unmap()
	if addr.Is6() {
		prefix, _ := addr.Prefix(64)
		return prefix.String()
	}
	return addr.String()
}

// underlyingConn is the *Conn under nc, a TLS connection's included.
func underlyingConn(nc net.Conn) *Conn {
	if c, ok := nc.(*Conn); ok {
		return c
	}
	if tc, ok := nc.(interface{ NetConn() net.Conn }); ok {
		c, _ := tc.NetConn().(*Conn)
		return c
	}
	return nil
}

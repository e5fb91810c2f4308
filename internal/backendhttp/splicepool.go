package backendhttp

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"time"
)

// spliceConn is one of SpliceTransport's backend connections. It keeps only
// a read buffer: requests are written through a pooled writer (requestWriters),
// so an idle connection holds no write buffer.
type spliceConn struct {
	conn      net.Conn
	br        *bufio.Reader
	idleSince time.Time
	// closeConn closes conn; made once per connection, it is what a
	// cancelled request runs (context.AfterFunc), with no closure per request.
	closeConn func()
}

// spliceReadBufferSize is sized for what comes in on a pooled connection:
// response heads, and small bodies in one read. Bodies past the buffer
// bypass it.
const spliceReadBufferSize = 16 << 10

// conn returns an idle connection to addr if idleOK and there is one, or
// dials one.
func (t *SpliceTransport) conn(ctx context.Context, addr string, idleOK bool) (pc *spliceConn, reused bool, err error) {
	if idleOK {
		if pc := t.takeIdle(addr); pc != nil {
			return pc, true, nil
		}
	}
	dial := t.next.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	conn, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, false, fmt.Errorf("dial %s: %w", addr, err)
	}
	closeConn := func() { conn.Close() }
	return &spliceConn{conn: conn, br: bufio.NewReaderSize(conn, spliceReadBufferSize), closeConn: closeConn}, false, nil
}

func (t *SpliceTransport) takeIdle(addr string) *spliceConn {
	t.mu.Lock()
	defer t.mu.Unlock()
	conns := t.idle[addr]
	for len(conns) > 0 {
		pc := conns[len(conns)-1]
		conns = conns[:len(conns)-1]
		if d := t.next.IdleConnTimeout; d > 0 && time.Since(pc.idleSince) > d {
			pc.conn.Close()
			continue
		}
		t.idle[addr] = conns
		return pc
	}
	delete(t.idle, addr)
	return nil
}

func (t *SpliceTransport) putIdle(addr string, pc *spliceConn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	limit := t.next.MaxIdleConnsPerHost
	if limit <= 0 {
		limit = http.DefaultMaxIdleConnsPerHost
	}
	if len(t.idle[addr]) >= limit {
		pc.conn.Close()
		return
	}
	pc.idleSince = time.Now()
	t.idle[addr] = append(t.idle[addr], pc)
}

// CloseIdleConnections closes the idle connections of t and of Next.
func (t *SpliceTransport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = map[string][]*spliceConn{}
	t.mu.Unlock()
	for _, conns := range idle {
		for _, pc := range conns {
			pc.conn.Close()
		}
	}
	t.next.CloseIdleConnections()
}

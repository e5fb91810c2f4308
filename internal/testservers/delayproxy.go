package testservers

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// DelayProxy is a TCP proxy on 127.0.0.1 for fault injection between two
// servers (s3cond and its backend): it can add latency, hold the bytes of
// one connection or of all, and reset connections as a crashing peer or a
// middlebox would.
type DelayProxy struct {
	Addr   string // host:port clients dial instead of the target
	target string

	listener net.Listener

	mu        sync.Mutex
	conns     map[*ProxyConn]struct{}
	latency   time.Duration
	paused    bool
	resetting bool
	changed   chan struct{} // closed and replaced whenever a setting changes
	closed    bool
	watches   map[*watch]struct{}

	wg sync.WaitGroup
}

// ProxyConn is one client connection through a DelayProxy.
type ProxyConn struct {
	proxy      *DelayProxy
	client     *net.TCPConn
	server     *net.TCPConn
	upReceived atomic.Int64 // bytes read from the client
	upSent     atomic.Int64 // bytes written to the target
	paused     atomic.Bool
	reset      atomic.Bool
	closeOnce  sync.Once
	heads      headEnds      // where request heads end in the client's bytes
	done       chan struct{} // closed once both directions have ended

	// spotTail is the end of the client's last read, for a watched marker
	// split across reads (pump's reader only).
	spotTail []byte
	// upWaiters are UpReached's channels, by the count each waits for.
	upMu      sync.Mutex
	upWaiters []upWaiter
}

type upWaiter struct {
	n  int64
	ch chan struct{}
}

// Sighting is where a watched marker passed: the connection, and the
// offset in its client's bytes where the marker begins.
type Sighting struct {
	Conn   *ProxyConn
	Offset int64
}

type watch struct {
	marker []byte
	found  chan Sighting
}

// maxMarker bounds a watched marker's length.
const maxMarker = 64

// Watch reports the first connection whose client sends marker (at most
// 64 bytes) from now on, and where in its bytes the marker begins: a test
// finds the one backend connection carrying a request it made, by a
// marker unique to its body, however many other requests the proxy
// carries (counting bytes cannot tell a busy pooled connection from it).
// stop ends the watch.
func (p *DelayProxy) Watch(marker []byte) (found <-chan Sighting, stop func()) {
	if len(marker) == 0 || len(marker) > maxMarker {
		panic(fmt.Sprintf("DelayProxy.Watch: marker of %d bytes, want 1 to %d", len(marker), maxMarker))
	}
	w := &watch{marker: append([]byte(nil), marker...), found: make(chan Sighting, 1)}
	p.mu.Lock()
	p.watches[w] = struct{}{}
	p.mu.Unlock()
	return w.found, func() {
		p.mu.Lock()
		delete(p.watches, w)
		p.mu.Unlock()
	}
}

// spot reports the watches whose marker data (at stream offset base)
// completes.
func (c *ProxyConn) spot(base int64, data []byte) {
	p := c.proxy
	p.mu.Lock()
	if len(p.watches) == 0 {
		p.mu.Unlock()
		c.keepSpotTail(data)
		return
	}
	watches := make([]*watch, 0, len(p.watches))
	for w := range p.watches {
		watches = append(watches, w)
	}
	p.mu.Unlock()
	window := append(c.spotTail, data...)
	start := base - int64(len(c.spotTail))
	for _, w := range watches {
		i := bytes.Index(window, w.marker)
		if i < 0 {
			continue
		}
		p.mu.Lock()
		if _, ok := p.watches[w]; ok {
			delete(p.watches, w)
			w.found <- Sighting{Conn: c, Offset: start + int64(i)}
		}
		p.mu.Unlock()
	}
	c.keepSpotTail(data)
}

// keepSpotTail keeps the last maxMarker-1 bytes of the stream, data its
// latest read.
func (c *ProxyConn) keepSpotTail(data []byte) {
	if len(data) >= maxMarker-1 {
		c.spotTail = append(c.spotTail[:0], data[len(data)-maxMarker+1:]...)
		return
	}
	c.spotTail = append(c.spotTail, data...)
	c.spotTail = c.spotTail[max(0, len(c.spotTail)-maxMarker+1):]
}

// UpReached is closed once the client has sent at least n bytes through
// this connection (BytesUp), whether or not they were forwarded.
func (c *ProxyConn) UpReached(n int64) <-chan struct{} {
	ch := make(chan struct{})
	c.upMu.Lock()
	defer c.upMu.Unlock()
	if c.upReceived.Load() >= n {
		close(ch)
		return ch
	}
	c.upWaiters = append(c.upWaiters, upWaiter{n: n, ch: ch})
	return ch
}

func (c *ProxyConn) notifyUp() {
	c.upMu.Lock()
	defer c.upMu.Unlock()
	got := c.upReceived.Load()
	kept := c.upWaiters[:0]
	for _, w := range c.upWaiters {
		if got >= w.n {
			close(w.ch)
		} else {
			kept = append(kept, w)
		}
	}
	c.upWaiters = kept
}

// headEnds records the stream offsets just after each "\r\n\r\n" the client
// sent: where an HTTP request's head ends and its body starts (as long as
// no body contains the sequence), so a test can count body bytes exactly.
type headEnds struct {
	mu      sync.Mutex
	offsets []int64
	tail    []byte // the last bytes seen, for a sequence split across reads
}

var headEnd = []byte("\r\n\r\n")

// see records the heads ending in data, which starts at stream offset base.
func (h *headEnds) see(base int64, data []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	window := append(h.tail, data...)
	start := base - int64(len(h.tail))
	for i := 0; ; {
		j := bytes.Index(window[i:], headEnd)
		if j < 0 {
			break
		}
		h.offsets = append(h.offsets, start+int64(i+j+len(headEnd)))
		i += j + len(headEnd)
	}
	h.tail = append([]byte(nil), window[max(0, len(window)-len(headEnd)+1):]...)
}

// HeadEndAfter is the offset in the client's bytes just after the first
// request head that ends past offset, and whether one has.
func (c *ProxyConn) HeadEndAfter(offset int64) (int64, bool) {
	c.heads.mu.Lock()
	defer c.heads.mu.Unlock()
	for _, end := range c.heads.offsets {
		if end > offset {
			return end, true
		}
	}
	return 0, false
}

// proxyChunkSize bounds one read; latency applies per chunk, so smaller
// chunks let a paused connection stop closer to a byte boundary.
const proxyChunkSize = 32 << 10

// StartDelayProxy starts a DelayProxy in front of target (host:port) and
// closes it when the test ends.
func StartDelayProxy(t testing.TB, target string) *DelayProxy {
	t.Helper()
	p, err := NewDelayProxy(target)
	if err != nil {
		t.Fatalf("start delay proxy: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// NewDelayProxy listens on a free 127.0.0.1 port and forwards every
// connection to target. The caller must Close it.
func NewDelayProxy(target string) (*DelayProxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for delay proxy: %w", err)
	}
	p := &DelayProxy{Addr: l.Addr().String(), target: target, listener: l,
		conns: map[*ProxyConn]struct{}{}, changed: make(chan struct{}), watches: map[*watch]struct{}{}}
	p.wg.Add(1)
	go p.acceptLoop()
	return p, nil
}

// Endpoint is "http://" + Addr.
func (p *DelayProxy) Endpoint() string { return "http://" + p.Addr }

// SetLatency delays every chunk of bytes, in both directions, by d after it
// was read (0 turns it off). It delays without limiting throughput, like a
// long network path.
func (p *DelayProxy) SetLatency(d time.Duration) { p.update(func() { p.latency = d }) }

// Pause stops forwarding bytes on every connection, current and new, until
// Resume; what arrives meanwhile waits in the proxy.
func (p *DelayProxy) Pause() { p.update(func() { p.paused = true }) }

// Resume ends Pause and delivers what waited, in order.
func (p *DelayProxy) Resume() { p.update(func() { p.paused = false }) }

// SetResetting(true) resets every open connection (TCP RST, pending bytes
// dropped) and every new one as soon as it is accepted, as a backend that
// crashes on each request would; SetResetting(false) ends it.
func (p *DelayProxy) SetResetting(on bool) {
	var open []*ProxyConn
	p.update(func() {
		p.resetting = on
		if on {
			for c := range p.conns {
				open = append(open, c)
			}
		}
	})
	for _, c := range open {
		c.Reset()
	}
}

// Conns lists the connections open now.
func (p *DelayProxy) Conns() []*ProxyConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*ProxyConn, 0, len(p.conns))
	for c := range p.conns {
		out = append(out, c)
	}
	return out
}

// Close stops accepting, resets every connection and waits for the
// proxy's goroutines.
func (p *DelayProxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.mu.Unlock()
	_ = p.listener.Close()
	for _, c := range p.Conns() {
		c.Reset()
	}
	p.update(func() {}) // wake paused pumps so they see the closed connections
	p.wg.Wait()
}

func (p *DelayProxy) update(change func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	change()
	close(p.changed)
	p.changed = make(chan struct{})
}

type proxySettings struct {
	latency   time.Duration
	paused    bool
	resetting bool
	changed   <-chan struct{}
}

func (p *DelayProxy) settings() proxySettings {
	p.mu.Lock()
	defer p.mu.Unlock()
	return proxySettings{latency: p.latency, paused: p.paused, resetting: p.resetting, changed: p.changed}
}

func (p *DelayProxy) acceptLoop() {
	defer p.wg.Done()
	for {
		conn, err := p.listener.Accept()
		if err != nil {
			return // listener closed
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.serve(conn.(*net.TCPConn))
		}()
	}
}

func (p *DelayProxy) serve(client *net.TCPConn) {
	if p.settings().resetting {
		resetTCP(client)
		return
	}
	server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		resetTCP(client) // the target is down: the client sees a reset, as without the proxy it would see a refusal
		return
	}
	c := &ProxyConn{proxy: p, client: client, server: server.(*net.TCPConn), done: make(chan struct{})}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		c.Reset()
		return
	}
	p.conns[c] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.conns, c)
		p.mu.Unlock()
	}()

	var pumps sync.WaitGroup
	pumps.Add(2)
	go func() { defer pumps.Done(); c.pump(c.client, c.server, &c.upReceived, &c.upSent) }()
	go func() { defer pumps.Done(); c.pump(c.server, c.client, nil, nil) }()
	pumps.Wait()
	c.close()
	close(c.done)
}

// Done is closed once both directions of the connection have ended: the
// client or the target closed or reset it.
func (c *ProxyConn) Done() <-chan struct{} { return c.done }

// BytesUp is how many bytes the client sent through this connection so far
// (read by the proxy, whether or not forwarded yet).
func (c *ProxyConn) BytesUp() int64 { return c.upReceived.Load() }

// BytesUpForwarded is how many of them reached the target.
func (c *ProxyConn) BytesUpForwarded() int64 { return c.upSent.Load() }

// Pause holds this connection's bytes (both directions) until Resume.
func (c *ProxyConn) Pause() { c.paused.Store(true); c.proxy.update(func() {}) }

// Resume delivers what this connection held and forwards again.
func (c *ProxyConn) Resume() { c.paused.Store(false); c.proxy.update(func() {}) }

// Reset drops what this connection holds and resets both sides (TCP RST).
func (c *ProxyConn) Reset() {
	c.closeOnce.Do(func() {
		c.reset.Store(true)
		resetTCP(c.client)
		resetTCP(c.server)
		c.proxy.update(func() {}) // wake this connection's pumps if paused
	})
}

// close ends a connection whose both directions finished normally.
func (c *ProxyConn) close() {
	c.closeOnce.Do(func() {
		_ = c.client.Close()
		_ = c.server.Close()
	})
}

type proxyChunk struct {
	data []byte
	due  time.Time
	eof  bool
}

// pump copies src to dst: one goroutine reads and stamps chunks, this one
// writes each when its latency passed and neither the proxy nor the
// connection is paused.
func (c *ProxyConn) pump(src, dst *net.TCPConn, received, sent *atomic.Int64) {
	chunks := make(chan proxyChunk, 1024)
	go func() {
		defer close(chunks)
		for {
			buf := make([]byte, proxyChunkSize)
			n, err := src.Read(buf)
			if n > 0 {
				if received != nil {
					c.heads.see(received.Load(), buf[:n])
					c.spot(received.Load(), buf[:n])
					received.Add(int64(n))
					c.notifyUp()
				}
				chunks <- proxyChunk{data: buf[:n], due: time.Now().Add(c.proxy.settings().latency)}
			}
			if err != nil {
				chunks <- proxyChunk{eof: errors.Is(err, io.EOF)}
				return
			}
		}
	}()
	for chunk := range chunks {
		if !c.waitUntilDeliverable(chunk.due) {
			c.Reset()
			continue // drain so the reader goroutine ends
		}
		if chunk.data == nil {
			if chunk.eof {
				_ = dst.CloseWrite() // pass the half-close on
			} else {
				c.Reset() // the source failed (reset): fail the other side too
			}
			continue
		}
		if _, err := dst.Write(chunk.data); err != nil {
			c.Reset()
			continue
		}
		if sent != nil {
			sent.Add(int64(len(chunk.data)))
		}
	}
}

// waitUntilDeliverable blocks until due has passed and nothing pauses the
// connection; false if the proxy started resetting or closed meanwhile.
func (c *ProxyConn) waitUntilDeliverable(due time.Time) bool {
	for {
		s := c.proxy.settings()
		if s.resetting || c.reset.Load() || c.proxy.isClosed() {
			return false
		}
		wait := time.Until(due)
		if !s.paused && !c.paused.Load() && wait <= 0 {
			return true
		}
		var timer <-chan time.Time
		if wait > 0 {
			timer = time.After(wait)
		}
		select {
		case <-s.changed:
		case <-timer:
		}
	}
}

func (p *DelayProxy) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// resetTCP closes conn with SO_LINGER 0, so the peer gets a RST rather than
// an orderly FIN.
func resetTCP(conn *net.TCPConn) {
	_ = conn.SetLinger(0)
	_ = conn.Close()
}

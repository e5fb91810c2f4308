package testservers

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// FINHop is a TCP hop on 127.0.0.1 that stands for an L4 proxy or a
// sidecar between s3cond and its store: it relays bytes both ways, and when
// its client side ends, by a FIN or by a reset, it closes the store side
// with a FIN (shutdown of its write half). A request the client aborted
// with a reset therefore reaches the store as a body that simply ended,
// which is what a store must not take for a complete upload.
type FINHop struct {
	Addr   string
	target string

	listener net.Listener
	// ResetsAsFIN counts client connections that ended in a reset and were
	// passed on as a FIN: the fault the hop exists for, actually injected.
	resetsAsFIN atomic.Int64
	// settled counts those whose store side then closed too: the store
	// has finished with the request (stored it or not).
	settled atomic.Int64

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// StartFINHop starts a hop to target, closed when the test ends.
func StartFINHop(t testing.TB, target string) *FINHop {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen for FIN hop: %v", err)
	}
	h := &FINHop{Addr: l.Addr().String(), target: target, listener: l, conns: map[net.Conn]struct{}{}}
	h.wg.Add(1)
	go h.acceptLoop()
	t.Cleanup(h.Close)
	return h
}

// Endpoint is "http://" + Addr.
func (h *FINHop) Endpoint() string { return "http://" + h.Addr }

// ResetsAsFIN is how many client resets the hop passed on as a FIN.
func (h *FINHop) ResetsAsFIN() int64 { return h.resetsAsFIN.Load() }

// SettledResets is how many of those the store has since closed: once it
// reaches n, the store is done with the first n aborted requests.
func (h *FINHop) SettledResets() int64 { return h.settled.Load() }

// Close stops accepting, closes every connection and waits for the relays.
func (h *FINHop) Close() {
	h.mu.Lock()
	h.closed = true
	for c := range h.conns {
		_ = c.Close()
	}
	h.mu.Unlock()
	_ = h.listener.Close()
	h.wg.Wait()
}

func (h *FINHop) track(c net.Conn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		_ = c.Close()
		return false
	}
	h.conns[c] = struct{}{}
	return true
}

func (h *FINHop) untrack(c net.Conn) {
	h.mu.Lock()
	delete(h.conns, c)
	h.mu.Unlock()
	_ = c.Close()
}

func (h *FINHop) acceptLoop() {
	defer h.wg.Done()
	for {
		client, err := h.listener.Accept()
		if err != nil {
			return
		}
		h.wg.Add(1)
		go h.relay(client.(*net.TCPConn))
	}
}

// relay carries one connection. The store's side is closed with a FIN as
// soon as the client's side ends, however it ended; the store's answer is
// then drained (for a bounded time) so closing never turns into a reset
// because of unread bytes.
func (h *FINHop) relay(client *net.TCPConn) {
	defer h.wg.Done()
	if !h.track(client) {
		return
	}
	defer h.untrack(client)
	conn, err := net.Dial("tcp", h.target)
	if err != nil {
		return
	}
	server := conn.(*net.TCPConn)
	if !h.track(server) {
		return
	}
	defer h.untrack(server)
	down := make(chan struct{})
	go func() {
		defer close(down)
		// Once the client is gone, keep reading the store's answer: a close
		// with unread bytes would be a reset, the very thing this hop hides.
		_, _ = io.Copy(&afterFailureDiscard{w: client}, server)
	}()
	_, err = io.Copy(server, client)
	reset := errors.Is(err, syscall.ECONNRESET)
	if reset {
		h.resetsAsFIN.Add(1)
	}
	_ = server.CloseWrite()
	select {
	case <-down:
		if reset {
			h.settled.Add(1)
		}
	case <-time.After(30 * time.Second):
		fmt.Println("FIN hop: the store kept a closed request's connection open for 30 s")
	}
}

// afterFailureDiscard writes to w until a write fails, then discards.
type afterFailureDiscard struct {
	w      io.Writer
	failed bool
}

func (d *afterFailureDiscard) Write(p []byte) (int, error) {
	if !d.failed {
		if _, err := d.w.Write(p); err != nil {
			d.failed = true
		}
	}
	return len(p), nil
}

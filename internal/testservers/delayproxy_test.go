package testservers

import (
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startEcho runs a TCP echo server, standing in for the backend the proxy
// fronts in the real tests.
func startEcho(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() { defer conn.Close(); _, _ = io.Copy(conn, conn) }()
		}
	}()
	return l.Addr().String()
}

func dialProxy(t *testing.T, p *DelayProxy) net.Conn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", p.Addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func echoOnce(t *testing.T, conn net.Conn, msg string, deadline time.Duration) (string, error) {
	t.Helper()
	if _, err := conn.Write([]byte(msg)); err != nil {
		return "", err
	}
	_ = conn.SetReadDeadline(time.Now().Add(deadline))
	buf := make([]byte, len(msg))
	_, err := io.ReadFull(conn, buf)
	return string(buf), err
}

func TestDelayProxyForwardsBothWays(t *testing.T) {
	p := StartDelayProxy(t, startEcho(t))
	conn := dialProxy(t, p)
	got, err := echoOnce(t, conn, "hello", 2*time.Second)
	if err != nil || got != "hello" {
		t.Fatalf("echo through proxy: %q, %v", got, err)
	}
	conns := p.Conns()
	if len(conns) != 1 || conns[0].BytesUp() != 5 || conns[0].BytesUpForwarded() != 5 {
		t.Fatalf("want one connection with 5 bytes up, got %d connections", len(conns))
	}
}

func TestDelayProxyLatencyAppliesEachWay(t *testing.T) {
	p := StartDelayProxy(t, startEcho(t))
	p.SetLatency(150 * time.Millisecond)
	conn := dialProxy(t, p)
	start := time.Now()
	if _, err := echoOnce(t, conn, "x", 3*time.Second); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Fatalf("round trip took %s, want at least 2 × 150ms", took)
	}
}

func TestDelayProxyPauseHoldsBytesUntilResume(t *testing.T) {
	p := StartDelayProxy(t, startEcho(t))
	conn := dialProxy(t, p)
	if _, err := echoOnce(t, conn, "a", 2*time.Second); err != nil {
		t.Fatal(err)
	}
	pc := p.Conns()[0]
	pc.Pause()
	if _, err := echoOnce(t, conn, "b", 300*time.Millisecond); err == nil {
		t.Fatal("a paused connection delivered bytes")
	}
	if pc.BytesUp() != 2 || pc.BytesUpForwarded() != 1 {
		t.Fatalf("paused: received %d forwarded %d, want 2 and 1", pc.BytesUp(), pc.BytesUpForwarded())
	}
	// Other connections are not held.
	other := dialProxy(t, p)
	if got, err := echoOnce(t, other, "c", 2*time.Second); err != nil || got != "c" {
		t.Fatalf("second connection while the first is paused: %q, %v", got, err)
	}
	pc.Resume()
	buf := make([]byte, 1)
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.ReadFull(conn, buf); err != nil || buf[0] != 'b' {
		t.Fatalf("after resume: %q, %v", buf, err)
	}
}

func TestDelayProxyPauseAllHoldsNewConnections(t *testing.T) {
	p := StartDelayProxy(t, startEcho(t))
	p.Pause()
	conn := dialProxy(t, p)
	if _, err := echoOnce(t, conn, "a", 300*time.Millisecond); err == nil {
		t.Fatal("the paused proxy delivered bytes")
	}
	p.Resume()
	buf := make([]byte, 1)
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.ReadFull(conn, buf); err != nil || buf[0] != 'a' {
		t.Fatalf("after resume: %q, %v", buf, err)
	}
}

func TestDelayProxyResetDropsHeldBytes(t *testing.T) {
	p := StartDelayProxy(t, startEcho(t))
	conn := dialProxy(t, p)
	if _, err := echoOnce(t, conn, "a", 2*time.Second); err != nil {
		t.Fatal(err)
	}
	pc := p.Conns()[0]
	pc.Pause()
	if _, err := conn.Write([]byte("b")); err != nil {
		t.Fatal(err)
	}
	pc.Reset()
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err := conn.Read(make([]byte, 1))
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("read after reset: %v, want connection reset", err)
	}
}

func TestDelayProxyResettingModeResetsNewAndOpenConnections(t *testing.T) {
	p := StartDelayProxy(t, startEcho(t))
	open := dialProxy(t, p)
	if _, err := echoOnce(t, open, "a", 2*time.Second); err != nil {
		t.Fatal(err)
	}
	p.SetResetting(true)
	if _, err := echoOnce(t, open, "b", 2*time.Second); err == nil {
		t.Fatal("an open connection survived resetting mode")
	}
	// The reset may come before the dial returns, or at the first exchange.
	if fresh, err := net.DialTimeout("tcp", p.Addr, time.Second); err == nil {
		defer fresh.Close()
		if _, err := echoOnce(t, fresh, "c", 2*time.Second); err == nil {
			t.Fatal("a new connection worked in resetting mode")
		}
	} else if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("dial in resetting mode: %v, want a connection reset", err)
	}
	p.SetResetting(false)
	again := dialProxy(t, p)
	if got, err := echoOnce(t, again, "d", 2*time.Second); err != nil || got != "d" {
		t.Fatalf("after resetting mode ended: %q, %v", got, err)
	}
}

func TestDelayProxyTargetDownResetsClient(t *testing.T) {
	dead := FreeAddr(t) // nothing listens there
	p := StartDelayProxy(t, dead)
	if p.Addr == dead {
		t.Fatalf("the proxy got the port chosen as dead target, %s", dead)
	}
	// On loopback the reset can beat the end of connect(), so the dial may fail too.
	conn, err := net.DialTimeout("tcp", p.Addr, time.Second)
	if err != nil {
		return
	}
	defer conn.Close()
	if _, err := echoOnce(t, conn, "a", 2*time.Second); err == nil {
		t.Fatal("a connection to a dead target delivered data")
	}
}

func TestHeadEndsAreFoundAcrossReads(t *testing.T) {
	var h headEnds
	// Two requests, read in pieces that split the first "\r\n\r\n".
	first, second := "PUT / HTTP/1.1\r\nA: b\r\n\r\nbody", "GET / HTTP/1.1\r\n\r\n"
	var offset int64
	for _, piece := range []string{first[:21], first[21:23], first[23:], second} {
		h.see(offset, []byte(piece))
		offset += int64(len(piece))
	}
	want := []int64{int64(strings.Index(first, "body")), int64(len(first) + len(second))}
	if len(h.offsets) != 2 || h.offsets[0] != want[0] || h.offsets[1] != want[1] {
		t.Fatalf("head ends at %v, want %v", h.offsets, want)
	}
}

// A watched marker is found on the connection that sent it, at its offset,
// even split across writes, and not on another connection that carried
// more bytes; UpReached fires once the count is reached.
func TestDelayProxyWatchFindsTheConnectionSendingAMarker(t *testing.T) {
	p := StartDelayProxy(t, startEcho(t))
	busy := dialProxy(t, p)
	if _, err := echoOnce(t, busy, strings.Repeat("x", 4096), 2*time.Second); err != nil {
		t.Fatal(err)
	}
	found, stop := p.Watch([]byte("marker-42|"))
	defer stop()
	conn := dialProxy(t, p)
	if _, err := echoOnce(t, conn, "head\r\n\r\nmark", 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := echoOnce(t, busy, strings.Repeat("y", 4096), 2*time.Second); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-found:
		t.Fatalf("found %+v before the marker was complete", s)
	default:
	}
	if _, err := echoOnce(t, conn, "er-42|rest", 2*time.Second); err != nil {
		t.Fatal(err)
	}
	var s Sighting
	select {
	case s = <-found:
	case <-time.After(2 * time.Second):
		t.Fatal("the marker was not found")
	}
	if s.Offset != int64(len("head\r\n\r\n")) || s.Conn.BytesUp() != int64(len("head\r\n\r\nmarker-42|rest")) {
		t.Fatalf("found at offset %d on a connection of %d bytes", s.Offset, s.Conn.BytesUp())
	}
	reached := s.Conn.UpReached(s.Conn.BytesUp() + 3)
	select {
	case <-reached:
		t.Fatal("UpReached fired before the bytes were sent")
	default:
	}
	if _, err := echoOnce(t, conn, "abc", 2*time.Second); err != nil {
		t.Fatal(err)
	}
	select {
	case <-reached:
	case <-time.After(2 * time.Second):
		t.Fatal("UpReached did not fire once the bytes were sent")
	}
}

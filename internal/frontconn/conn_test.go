package frontconn

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/s3cond/s3cond/internal/testkit"
)

// pair is a real loopback TCP connection: the server side accepted through
// Listener (as http.Server accepts), the client side as a client has it.
func pair(t *testing.T) (server *Conn, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	accepted, err := Listener{ln}.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { accepted.Close() })
	server, ok := accepted.(*Conn)
	if !ok {
		t.Fatalf("Listener accepted a %T, want *Conn", accepted)
	}
	return server, client
}

// nothingArrives checks that the client has nothing to read for a short
// while: held bytes can never arrive, so this cannot fail spuriously.
func nothingArrives(t *testing.T, client net.Conn) {
	t.Helper()
	_ = client.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	var b [1]byte
	if n, err := client.Read(b[:]); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read %d bytes (err %v) while the server held them", n, err)
	}
	_ = client.SetReadDeadline(time.Time{})
}

func TestHeldWritesLeaveTogetherOnRelease(t *testing.T) {
	server, client := pair(t)
	server.Hold()
	for _, part := range []string{"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n", "bo", "dy"} {
		if n, err := server.Write([]byte(part)); n != len(part) || err != nil {
			t.Fatalf("held write: %d, %v", n, err)
		}
	}
	nothingArrives(t, client)
	if err := server.Release(); err != nil {
		t.Fatal(err)
	}
	want := "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nbody"
	got := make([]byte, len(want))
	if _, err := io.ReadFull(client, got); err != nil || string(got) != want {
		t.Fatalf("client read %q, %v; want %q", got, err, want)
	}
	// Released: writes go straight out again, and a second Release is a no-op.
	if err := server.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := server.Write([]byte("next")); err != nil {
		t.Fatal(err)
	}
	got = make([]byte, 4)
	if _, err := io.ReadFull(client, got); err != nil || string(got) != "next" {
		t.Fatalf("client read %q, %v after release", got, err)
	}
}

// ReadFrom (the splice path for large bodies) must send what is held first,
// or the body would overtake its head.
func TestReadFromSendsHeldBytesFirst(t *testing.T) {
	server, client := pair(t)
	server.Hold()
	if _, err := server.Write([]byte("head;")); err != nil {
		t.Fatal(err)
	}
	if _, err := server.ReadFrom(strings.NewReader("body")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len("head;body"))
	if _, err := io.ReadFull(client, got); err != nil || string(got) != "head;body" {
		t.Fatalf("client read %q, %v", got, err)
	}
}

func TestContextCarriesOnlyHoldingConnections(t *testing.T) {
	server, client := pair(t)
	if FromContext(NewContext(context.Background(), server)) != server {
		t.Fatal("a *Conn is not found in its context")
	}
	if FromContext(NewContext(context.Background(), client)) != nil {
		t.Fatal("a plain connection was taken for one that can hold")
	}
}

// A write that fails on release closes the connection, so that net/http,
// which believes the held bytes sent, answers nothing more on it.
func TestFailedReleaseClosesTheConnection(t *testing.T) {
	server, client := pair(t)
	if tc, ok := client.(*net.TCPConn); ok {
		_ = tc.SetLinger(0) // close with a reset
	}
	client.Close()
	big := bytes.Repeat([]byte("x"), MaxHeld)
	// The kernel learns of the reset on its own time: write until a
	// release fails.
	testkit.Eventually(t.Context(), t, "a release on the reset connection to fail", func(context.Context) error {
		server.Hold()
		_, _ = server.Write(big)
		if server.Release() == nil {
			return errors.New("writes to the reset connection still succeed")
		}
		return nil
	})
	if _, err := server.TCPConn.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("after a failed release, a write got %v, want the connection closed", err)
	}
}

// An answer that grows past MaxHeld leaves as it comes: what is held never
// grows without bound.
func TestHeldBytesAreBounded(t *testing.T) {
	server, client := pair(t)
	server.Hold()
	part := bytes.Repeat([]byte("x"), 4<<10)
	for written := 0; written <= MaxHeld; written += len(part) {
		if _, err := server.Write(part); err != nil {
			t.Fatal(err)
		}
	}
	got := make([]byte, MaxHeld+len(part))
	if _, err := io.ReadFull(client, got); err != nil {
		t.Fatalf("the bytes past MaxHeld did not leave: %v", err)
	}
	if err := server.Release(); err != nil {
		t.Fatal(err)
	}
}

// net/http may write a "100 Continue" from the goroutine reading a request
// body while the serving goroutine holds and releases: run under -race.
func TestWritesFromAnotherGoroutineWhileHolding(t *testing.T) {
	server, client := pair(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 100 {
			_, _ = server.Write([]byte("c"))
		}
	}()
	for range 100 {
		server.Hold()
		_, _ = server.Write([]byte("h"))
		if err := server.Release(); err != nil {
			t.Fatal(err)
		}
	}
	<-done
	got := make([]byte, 200)
	if _, err := io.ReadFull(client, got); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(got, []byte("c")); n != 100 {
		t.Fatalf("%d of 100 writes from the other goroutine arrived", n)
	}
}

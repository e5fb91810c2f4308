package bench

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// relayTestTimeout bounds every wait, so a relay that hangs fails the test
// instead of stalling it.
const relayTestTimeout = 10 * time.Second

func listenLoopback(t *testing.T) *net.TCPListener {
	t.Helper()
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// acceptTarget waits for the connection the relay opens to the target.
func acceptTarget(t *testing.T, target *net.TCPListener) *net.TCPConn {
	t.Helper()
	target.SetDeadline(time.Now().Add(relayTestTimeout))
	conn, err := target.AcceptTCP()
	if err != nil {
		t.Fatalf("the relay did not connect to the target: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(relayTestTimeout))
	return conn
}

// startRelay serves a relay to target until the test ends. It returns the
// relay's address and stop, which cancels Serve and returns its result;
// the test fails if Serve has not returned by the end.
func startRelay(t *testing.T, target string) (addr string, stop func() error) {
	t.Helper()
	ln := listenLoopback(t)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	relay := &Relay{Target: target}
	go func() { served <- relay.Serve(ctx, ln) }()
	stop = sync.OnceValue(func() error {
		cancel()
		select {
		case err := <-served:
			return err
		case <-time.After(relayTestTimeout):
			return errors.New("Serve did not return after its context was cancelled")
		}
	})
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	})
	return ln.Addr().String(), stop
}

func dialRelay(t *testing.T, addr string) *net.TCPConn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, relayTestTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(relayTestTimeout))
	return conn.(*net.TCPConn)
}

// streamOf is size bytes of reproducible noise, different for each seed.
func streamOf(seed uint64, size int64) io.Reader {
	var key [32]byte
	key[0] = byte(seed)
	return io.LimitReader(rand.NewChaCha8(key), size)
}

type digest = [sha256.Size]byte

// exchanged is what one end of a connection sent and received.
type exchanged struct {
	sent, received digest
	err            error
}

// exchange sends out on conn and half-closes, while it reads what comes
// back until the end of stream. It does not touch t: the target's end runs
// on its own goroutine.
func exchange(conn *net.TCPConn, out io.Reader) exchanged {
	sentHash := sha256.New()
	sendErr := make(chan error, 1)
	go func() {
		_, err := io.Copy(conn, io.TeeReader(out, sentHash))
		if err == nil {
			err = conn.CloseWrite()
		}
		sendErr <- err
	}()
	receivedHash := sha256.New()
	_, err := io.Copy(receivedHash, conn)
	if err != nil {
		err = fmt.Errorf("receive: %w", err)
	}
	if sendErr := <-sendErr; sendErr != nil {
		err = errors.Join(err, fmt.Errorf("send: %w", sendErr))
	}
	return exchanged{sent: digest(sentHash.Sum(nil)), received: digest(receivedHash.Sum(nil)), err: err}
}

func TestRelayPassesBytesBothWaysUnchanged(t *testing.T) {
	for name, size := range map[string]int64{"small": 5, "large": 48 << 20} {
		t.Run(name, func(t *testing.T) {
			target := listenLoopback(t)
			addr, _ := startRelay(t, target.Addr().String())
			client := dialRelay(t, addr)
			backend := acceptTarget(t, target)

			// Both ends send different streams at once, so a relay that
			// echoed, dropped, reordered or crossed bytes would be caught.
			atTarget := make(chan exchanged, 1)
			go func() { atTarget <- exchange(backend, streamOf(2, size)) }()
			atClient := exchange(client, streamOf(1, size))
			atBackend := <-atTarget
			if atClient.err != nil || atBackend.err != nil {
				t.Fatalf("client: %v; target: %v", atClient.err, atBackend.err)
			}
			if atClient.sent == atBackend.sent {
				t.Fatal("both streams are equal: the test cannot tell the directions apart")
			}
			if atBackend.received != atClient.sent {
				t.Error("the target received other bytes than the client sent")
			}
			if atClient.received != atBackend.sent {
				t.Error("the client received other bytes than the target sent")
			}
		})
	}
}

// A request-reply exchange that relies on half-close in both directions:
// each side reads to the end of stream and only then answers, so a relay
// that dropped a FIN would hang, and one that closed the whole connection on
// the first FIN would lose the answer.
func TestRelayPropagatesHalfClose(t *testing.T) {
	target := listenLoopback(t)
	addr, _ := startRelay(t, target.Addr().String())
	client := dialRelay(t, addr)
	backend := acceptTarget(t, target)

	if _, err := backend.Write([]byte("greeting")); err != nil {
		t.Fatal(err)
	}
	if err := backend.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(client)
	if err != nil || string(got) != "greeting" {
		t.Fatalf("client read %q, %v; want the greeting, then end of stream", got, err)
	}

	if _, err := client.Write([]byte("answer after EOF")); err != nil {
		t.Fatalf("client can no longer send after the target's half-close: %v", err)
	}
	if err := client.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	got, err = io.ReadAll(backend)
	if err != nil || string(got) != "answer after EOF" {
		t.Fatalf("target read %q, %v; want the answer, then end of stream", got, err)
	}
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// wantClosedByPeer reads from conn and fails unless the peer closed it (end
// of stream or reset) before the deadline.
func wantClosedByPeer(t *testing.T, conn net.Conn) {
	t.Helper()
	n, err := conn.Read(make([]byte, 1))
	if n > 0 || err == nil {
		t.Fatalf("read %d bytes, %v; want the connection closed", n, err)
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal("the connection stayed open")
	}
}

func TestRelayClosesTheClientWhenTheTargetIsUnreachable(t *testing.T) {
	addr, _ := startRelay(t, closedPort(t))
	client := dialRelay(t, addr)
	wantClosedByPeer(t, client)
}

func TestRelayServeReturnsWhenTheContextIsCancelled(t *testing.T) {
	target := listenLoopback(t)
	addr, stop := startRelay(t, target.Addr().String())
	client := dialRelay(t, addr)
	backend := acceptTarget(t, target)
	// An open, idle relayed connection must not keep Serve from returning.
	if _, err := client.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(backend, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}

	if err := stop(); err != nil {
		t.Fatalf("Serve after cancel: %v, want nil", err)
	}
	wantClosedByPeer(t, client)
	wantClosedByPeer(t, backend)
	if conn, err := net.DialTimeout("tcp", addr, relayTestTimeout); err == nil {
		conn.Close()
		t.Error("the relay still accepts connections after Serve returned")
	}
}

func TestRelayServeReportsAFailingListener(t *testing.T) {
	ln := listenLoopback(t)
	ln.Close()
	err := (&Relay{Target: closedPort(t)}).Serve(context.Background(), ln)
	if err == nil || !strings.Contains(err.Error(), "accept on") {
		t.Errorf("Serve on a closed listener: %v, want an accept error", err)
	}
}

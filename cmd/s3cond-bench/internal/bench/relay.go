package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// Relay forwards each TCP connection it accepts to Target, byte for byte,
// with no logic in between. Put in front of an S3 server, it measures what
// one extra TCP hop costs on its own, so that a proxy's overhead can be told
// apart from the hop's.
type Relay struct {
	// Target is the host:port every accepted connection is forwarded to.
	Target string
	// DialTimeout bounds the connect to Target; zero means 10 s.
	DialTimeout time.Duration
	// Log receives failed dials and broken copies; the zero value drops them.
	Log zerolog.Logger
}

// halfCloser is a connection whose sending side can be shut on its own, as
// *net.TCPConn can: that is how one side's end of stream reaches the other
// while replies still flow back.
type halfCloser interface {
	net.Conn
	CloseWrite() error
}

// Serve relays the connections accepted on listener until ctx is cancelled,
// then closes the listener and every relayed connection and returns nil once
// they are all gone. It returns an error if accepting fails for any other
// reason. Serve owns listener.
func (r *Relay) Serve(ctx context.Context, listener net.Listener) error {
	var connections sync.WaitGroup
	ctx, stop := context.WithCancel(ctx)
	// However Serve ends, the relayed connections end with it, and it
	// returns only once they have: no goroutine outlives it.
	defer connections.Wait()
	defer stop()
	context.AfterFunc(ctx, func() { listener.Close() })
	for {
		conn, err := listener.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("relay to %s: accept on %s: %w", r.Target, listener.Addr(), err)
		}
		client, ok := conn.(halfCloser)
		if !ok {
			conn.Close()
			return fmt.Errorf("relay to %s: listener %s yields %T, which cannot half-close", r.Target, listener.Addr(), conn)
		}
		connections.Go(func() { r.relay(ctx, client) })
	}
}

// relay connects client to a fresh connection to Target and copies both
// ways until both directions have ended or ctx is cancelled.
func (r *Relay) relay(ctx context.Context, client halfCloser) {
	defer client.Close()
	timeout := r.DialTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	dialer := net.Dialer{Timeout: timeout}
	conn, err := dialer.DialContext(ctx, "tcp", r.Target)
	if err != nil {
		// Closing the client is the only way to tell it: the relay speaks
		// no protocol in which to report the error.
		r.Log.Warn().Err(err).Str("client", client.RemoteAddr().String()).Msg("relay: dial target failed")
		return
	}
	backend := conn.(halfCloser) // "tcp" always dials a *net.TCPConn
	defer backend.Close()
	stopClosing := context.AfterFunc(ctx, func() {
		client.Close()
		backend.Close()
	})
	defer stopClosing()

	var upstream sync.WaitGroup
	upstream.Go(func() { r.pipe(backend, client, "client to target") })
	r.pipe(client, backend, "target to client")
	upstream.Wait()
}

// pipe copies src to dst until src ends, then shuts dst's sending side so
// the peer sees the end of stream while the other direction may still run.
func (r *Relay) pipe(dst, src halfCloser, direction string) {
	// The dynamic types are *net.TCPConn on both sides, so on Linux io.Copy
	// splices in the kernel: the payload never enters this process, and the
	// relay costs what the hop costs, not what a userspace copy would.
	_, err := io.Copy(dst, src)
	if err != nil && !errors.Is(err, net.ErrClosed) {
		r.Log.Debug().Err(err).Str("direction", direction).Msg("relay: copy ended with an error")
	}
	if err := dst.CloseWrite(); err != nil && !errors.Is(err, net.ErrClosed) {
		r.Log.Debug().Err(err).Str("direction", direction).Msg("relay: half-close failed")
	}
}

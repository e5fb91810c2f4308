package backendhttp

import (
	"context"
	"net"
	"net/http"
	"time"
)

// ResettingDialer dials backend connections that end with a TCP reset
// instead of a FIN whenever they are closed (SO_LINGER 0).
//
// Why: s3cond cuts off an upload that failed verification, lost its lease or
// lost its client by closing the backend connection before the final byte.
// After a FIN, some S3 servers (versitygw, seen here) take the short body as
// complete and store it; after a reset every server sees an error. The same
// holds when the s3cond process dies: the kernel resets its sockets. A
// connection closed after a finished exchange has nothing in flight, so
// resetting it loses nothing.
func ResettingDialer(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if tcp, ok := conn.(*net.TCPConn); ok {
			if err := tcp.SetLinger(0); err != nil {
				conn.Close()
				return nil, err
			}
		}
		return conn, nil
	}
}

// NewBackendTransport is the transport under the re-signer: tuned for one
// busy upstream (many idle connections kept for reuse), with no transparent
// gzip (bodies and ETags must pass untouched), and connections that reset
// when cut off.
func NewBackendTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DisableCompression = true
	t.MaxIdleConns = 256
	t.MaxIdleConnsPerHost = 256
	t.IdleConnTimeout = 90 * time.Second
	t.DialContext = ResettingDialer(&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second})
	t.ExpectContinueTimeout = 0
	// net/http's 4 KiB default split a small PUT into a write for the
	// headers and the first bytes, and more for the rest of the body; with
	// room for both, a 4 KiB PUT goes out in one write. Large bodies bypass
	// the buffer. (GETs and HEADs go through SpliceTransport's buffers.)
	t.WriteBufferSize = 32 << 10
	return t
}

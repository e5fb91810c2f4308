package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	stdlog "log"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/internal/frontconn"
	"github.com/s3cond/s3cond/proxy"
)

// drainTimeout bounds the wait, after the grace period, for cancelled
// requests to return. Their deferred lease releases need it: each takes at
// most a few seconds (proxy's releaseTimeout), and the lease store must
// stay open until they are done.
const drainTimeout = 10 * time.Second

// ServeOptions say where and how a built App serves.
type ServeOptions struct {
	// Listener receives S3 clients.
	Listener net.Listener
	// AdminListener receives operators (/metrics, /healthz, /readyz); nil
	// disables it.
	AdminListener net.Listener
	// TLS, when set, serves HTTPS on Listener; its GetCertificate may swap
	// certificates while running (internal/tlsreload).
	TLS *tls.Config
	// ShutdownGrace is how long requests in flight may run once ctx ends.
	ShutdownGrace time.Duration
	// MaxConnections caps the open client connections (frontconn's
	// CappedListener); 0: frontconn.DefaultMaxConnections.
	MaxConnections int
	// MaxUnauthenticatedConnectionsPerSource caps one client address's
	// connections that have carried no authenticated request; 0:
	// frontconn.DefaultMaxUnauthenticatedPerSource.
	MaxUnauthenticatedConnectionsPerSource int
	// Admin bounds the admin listener (adminserve.go).
	Admin AdminBounds
	Log   zerolog.Logger
}

// Serve serves a until ctx ends, then shuts down gracefully: the listeners
// stop accepting, /readyz reports not ready, requests in flight get
// ShutdownGrace to finish, and the rest are cancelled and waited for (so
// their leases are released) before Serve returns. The caller then closes
// the App. Serve returns an error only when a listener fails.
func (a *App) Serve(ctx context.Context, o ServeOptions) error {
	// Request contexts derive from requestsCtx, so cancelling it after the
	// grace reaches every handler still running; its cause tells them
	// from requests whose clients hung up (proxy.StatusClientClosedRequest).
	requestsCtx, cancelRequests := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancelRequests(proxy.ErrShuttingDown)
	var inFlight atomic.Int64
	// The cap sits under TLS too: a connection past it costs a handshake
	// and a 503, never more than frontconn.RefusalDeadline.
	capped := frontconn.NewCappedListener(o.Listener, frontconn.Limits{MaxConnections: o.MaxConnections,
		MaxUnauthenticatedPerSource: o.MaxUnauthenticatedConnectionsPerSource, Closed: a.connections.Closed("s3")})
	srv := &http.Server{
		Handler:           countInFlight(a.Handler, &inFlight),
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		// Above S3's 8 KiB, which the proxy answers with S3's error; this
		// bounds what a connection's header block can make the server hold.
		MaxHeaderBytes: proxy.MaxHeaderBytes,
		BaseContext:    func(net.Listener) context.Context { return requestsCtx },
		ConnContext:    frontconn.NewContext,
		// Tells the cap which connections are idle, to close the oldest
		// when a new one finds it full.
		ConnState: capped.ConnState,
		ErrorLog:  stdlog.New(debugWriter{o.Log.With().Str("component", "http-server").Logger()}, "", 0),
	}
	errc := make(chan error, 2)
	if o.TLS != nil {
		srv.TLSConfig = o.TLS
		// S3 clients speak HTTP/1.1; an empty map keeps HTTP/2 off, whose
		// stream resets and flow control the body hold-back was not built for.
		srv.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
		go func() { errc <- fmt.Errorf("serve HTTPS: %w", srv.ServeTLS(capped, "", "")) }()
	} else {
		go func() { errc <- fmt.Errorf("serve: %w", srv.Serve(capped)) }()
	}
	var adminSrv *http.Server
	if o.AdminListener != nil {
		var adminLn net.Listener
		adminSrv, adminLn = a.adminServer(o)
		go func() { errc <- fmt.Errorf("serve admin: %w", adminSrv.Serve(adminLn)) }()
	}
	defer func() {
		if adminSrv != nil {
			_ = adminSrv.Close()
		}
	}()

	select {
	case err := <-errc:
		_ = srv.Close()
		return err
	case <-ctx.Done():
	}
	if a.Readiness != nil {
		a.Readiness.Drain()
	}
	o.Log.Info().Int64("in_flight", inFlight.Load()).Dur("grace_ms", o.ShutdownGrace).
		Msg("shutting down: no new connections, waiting for requests in flight")
	graceCtx, cancelGrace := context.WithTimeout(context.Background(), o.ShutdownGrace)
	defer cancelGrace()
	err := srv.Shutdown(graceCtx)
	if err == nil {
		o.Log.Info().Msg("every request finished")
		return nil
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("shutdown: %w", err)
	}
	o.Log.Warn().Int64("in_flight", inFlight.Load()).
		Msg("grace period over: cancelling the requests still in flight")
	cancelRequests(proxy.ErrShuttingDown)
	_ = srv.Close() // unblocks handlers waiting on a client's body
	if !waitIdle(&inFlight, drainTimeout) {
		o.Log.Error().Int64("in_flight", inFlight.Load()).
			Msg("requests still running after cancellation; their leases expire on their own")
	}
	return nil
}

// debugWriter logs net/http's own complaints (TLS handshakes failing,
// clients hanging up mid-header) at debug level: on a public port they are
// mostly scanners, and a warning each would drown the access log.
type debugWriter struct{ log zerolog.Logger }

func (w debugWriter) Write(p []byte) (int, error) {
	w.log.Debug().Msg(strings.TrimSpace(string(p)))
	return len(p), nil
}

func countInFlight(next http.Handler, n *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		defer n.Add(-1)
		next.ServeHTTP(w, r)
	})
}

// waitIdle polls n down to zero; the wait happens once per process life.
func waitIdle(n *atomic.Int64, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for n.Load() > 0 {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

package app

import (
	stdlog "log"
	"math"
	"net"
	"net/http"
	"time"

	"github.com/s3cond/s3cond/internal/frontconn"
	"github.com/s3cond/s3cond/proxy"
)

// Defaults of the admin listener's bounds.
const (
	// DefaultAdminMaxConnections is enough for Prometheus, probes and an
	// operator's commands; nobody needs thousands of admin connections.
	DefaultAdminMaxConnections = 64
	// DefaultAdminIdleTimeout is the S3 port's keep-alive idle timeout.
	DefaultAdminIdleTimeout = 2 * time.Minute
	// adminReadHeaderTimeout bounds a request head on the admin listener.
	adminReadHeaderTimeout = 10 * time.Second
)

// AdminBounds are the admin listener's bounds: the S3 port's kinds of
// bound (header size, idle and header timeouts, a connection cap that
// sheds idle connections first), sized for operators.
type AdminBounds struct {
	// MaxConnections caps its open connections; 0: DefaultAdminMaxConnections.
	MaxConnections int
	// IdleTimeout closes a keep-alive connection idle this long; 0:
	// DefaultAdminIdleTimeout.
	IdleTimeout time.Duration
}

// adminServer is the admin listener's server and its capped listener.
// The admin port needs no S3 signature, so whoever reaches it must not be
// able to hold memory or descriptors the S3 port needs.
func (a *App) adminServer(o ServeOptions) (*http.Server, net.Listener) {
	maxConns := o.Admin.MaxConnections
	if maxConns <= 0 {
		maxConns = DefaultAdminMaxConnections
	}
	idle := o.Admin.IdleTimeout
	if idle <= 0 {
		idle = DefaultAdminIdleTimeout
	}
	// Nobody authenticates per connection here, and Prometheus and the
	// operator usually share an address: the cap alone bounds the listener
	// (past it, a 503, not a connection closed unanswered).
	capped := frontconn.NewCappedListener(o.AdminListener,
		frontconn.Limits{MaxConnections: maxConns, MaxUnauthenticatedPerSource: math.MaxInt, Closed: a.connections.Closed("admin")})
	srv := &http.Server{
		Handler:           refusePastTheCap(a.AdminHandler),
		ReadHeaderTimeout: adminReadHeaderTimeout,
		IdleTimeout:       idle,
		MaxHeaderBytes:    proxy.MaxHeaderBytes,
		ConnContext:       frontconn.NewContext,
		ConnState:         capped.ConnState,
		ErrorLog:          stdlog.New(debugWriter{o.Log.With().Str("component", "admin-server").Logger()}, "", 0),
	}
	return srv, capped
}

// refusePastTheCap answers a request on a connection accepted past the
// admin listener's cap with 503 and closes it.
func refusePastTheCap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if frontconn.Refused(r.Context()) {
			w.Header().Set("Connection", "close")
			http.Error(w, "too many admin connections are open", http.StatusServiceUnavailable)
			return
		}
		next.ServeHTTP(w, r)
	})
}

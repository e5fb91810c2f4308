package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"

	"github.com/rs/zerolog"
)

// HTTPRelay is Go's own reverse proxy (net/http's server in front of
// httputil.ReverseProxy over a keep-alive http.Transport) with no logic of
// its own: no signature checked or made, the client's Host passed on so the
// store checks the client's signature, as the nginx anchor in bench.sh
// does. Put in front of an S3 server, it measures what Go's two HTTP
// stacks and runtime cost per request, the floor of any proxy built on
// them, so that s3cond's own work can be told apart from it
// (docs/performance-notes.md, issue 35 item 7).
type HTTPRelay struct {
	// Target is the host:port every request is forwarded to, over plain HTTP.
	Target string
	// Log receives failed forwards; the zero value drops them.
	Log zerolog.Logger
}

// Serve forwards the requests accepted on listener until ctx is cancelled,
// then shuts the server down (waiting up to 5 s for requests in flight)
// and returns nil. It returns an error if serving fails for any other
// reason. Serve owns listener.
func (r *HTTPRelay) Serve(ctx context.Context, listener net.Listener) error {
	target := &url.URL{Scheme: "http", Host: r.Target}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.Proxy = nil
	// One idle connection per worker the benchmark may run, as nginx's
	// "keepalive 128" upstream in bench.sh keeps.
	transport.MaxIdleConnsPerHost = 128
	transport.DisableCompression = true
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = pr.In.Host
		},
		Transport: transport,
		ErrorHandler: func(w http.ResponseWriter, req *http.Request, err error) {
			r.Log.Warn().Err(err).Str("method", req.Method).Str("path", req.URL.Path).Msg("forward failed")
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	server := &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	stopped := make(chan error, 1)
	stop := context.AfterFunc(ctx, func() {
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		stopped <- server.Shutdown(shutdownCtx)
	})
	err := server.Serve(listener)
	if !errors.Is(err, http.ErrServerClosed) {
		stop()
		return fmt.Errorf("http relay to %s: serve on %s: %w", r.Target, listener.Addr(), err)
	}
	if err := <-stopped; err != nil {
		return fmt.Errorf("http relay to %s: shut down: %w", r.Target, err)
	}
	transport.CloseIdleConnections()
	return nil
}

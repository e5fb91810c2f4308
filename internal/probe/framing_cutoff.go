package probe

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// cutOffAnswerWait bounds how long a cut-off upload waits for the store's
// answer after its FIN: the verdict is read from what is stored, so an
// answer that never comes only ends the wait.
const cutOffAnswerWait = 5 * time.Second

// sendCutOff sends req's head and the first stream bytes of its body on a
// connection of its own, then half-closes it (a FIN) and waits, bounded,
// for an answer. net/http cannot do this: given a body shorter than its
// Content-Length it fails the write before flushing, so the store would
// receive nothing and a store that keeps what arrived before a FIN would
// pass. It returns the status, 0 when the store answered nothing, and the
// answer's header.
func sendCutOff(ctx context.Context, opts Options, req *http.Request, stream []byte) (int, http.Header, error) {
	conn, err := dialFor(ctx, opts, req)
	if err != nil {
		return 0, nil, err
	}
	defer conn.Close()
	deadline := time.Now().Add(cutOffAnswerWait)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	w := bufio.NewWriter(conn)
	fmt.Fprintf(w, "PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", req.URL.RequestURI(), req.URL.Host, req.ContentLength)
	if err := req.Header.Write(w); err != nil {
		return 0, nil, fmt.Errorf("write the cut-off upload's head: %w", err)
	}
	_, _ = w.WriteString("\r\n")
	_, _ = w.Write(stream)
	if err := w.Flush(); err != nil {
		return 0, nil, fmt.Errorf("send the cut-off upload: %w", err)
	}
	if err := closeWrite(conn); err != nil {
		return 0, nil, fmt.Errorf("half-close the cut-off upload: %w", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(io.LimitReader(conn, maxAnswerHeaderBytes)), req)
	if err != nil {
		return 0, nil, nil // no answer, or none in time: judged by what is stored
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header, nil
}

// dialFor connects to req's host as the probe's HTTP clients would: through
// their transport's dialer and TLS settings when it is an *http.Transport.
func dialFor(ctx context.Context, opts Options, req *http.Request) (net.Conn, error) {
	var dial func(ctx context.Context, network, addr string) (net.Conn, error)
	var tlsConfig *tls.Config
	if t, ok := opts.NewHTTPClient().Transport.(*http.Transport); ok {
		dial, tlsConfig = t.DialContext, t.TLSClientConfig
	}
	if dial == nil {
		dial = (&net.Dialer{Timeout: 10 * time.Second}).DialContext
	}
	host, port := req.URL.Hostname(), req.URL.Port()
	if port == "" {
		port = map[bool]string{true: "443", false: "80"}[req.URL.Scheme == "https"]
	}
	conn, err := dial(ctx, "tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("dial the store for a cut-off upload: %w", err)
	}
	if req.URL.Scheme != "https" {
		return conn, nil
	}
	cfg := &tls.Config{}
	if tlsConfig != nil {
		cfg = tlsConfig.Clone()
	}
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	tlsConn := tls.Client(conn, cfg)
	if err := tlsConn.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("TLS handshake for a cut-off upload: %w", err)
	}
	return tlsConn, nil
}

// closeWrite sends the FIN (after TLS's close_notify on a TLS connection).
func closeWrite(conn net.Conn) error {
	if cw, ok := conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return fmt.Errorf("a %T cannot be half-closed", conn)
}

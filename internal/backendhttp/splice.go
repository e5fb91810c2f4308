package backendhttp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// SpliceTransport sends GETs, HEADs, DELETEs and small PUTs to plain-HTTP
// backends over its own connections, one write and one read on the calling
// goroutine; everything else goes to Next unchanged.
//
// Why, for GETs: reading each byte of a large body from one socket and
// writing it to another was 95% of s3cond's CPU time, and halved GET
// throughput on a machine shared with the client and the backend
// (docs/performance.md). net/http's client reads bodies through a
// bufio.Reader, which hides the socket; here the response head is parsed
// (readPlainResponse, or http.ReadResponse) and the body's socket is handed, length-limited,
// to the client connection's ReadFrom, which splices on Linux. The body
// splices only when the caller copies it with io.Copy (or calls WriteTo)
// into a writer with a ReadFrom method that reaches a *net.TCPConn; plain
// Read works as with any response.
//
// Why, for small requests: http.Transport hands each request to its
// connection's writer goroutine and each answer back from its reader
// goroutine; for a 4 KiB PUT or the HEADs of a conditional write, those
// hand-offs cost more than the request itself. A small PUT body (up to
// MaxBufferedPUT) is read whole, and so verified, before the request is
// sent; head and body then leave in one write, and a kept-alive
// connection found dead can be retried with the same bytes.
type SpliceTransport struct {
	next *http.Transport

	mu   sync.Mutex
	idle map[string][]*spliceConn // by host:port, most recently used last
}

var _ http.RoundTripper = (*SpliceTransport)(nil)

// NewSpliceTransport returns a SpliceTransport that dials with next's
// DialContext and follows next's MaxIdleConnsPerHost, IdleConnTimeout and
// ResponseHeaderTimeout (its buffer sizes are its own); requests it does not
// handle go to next.
func NewSpliceTransport(next *http.Transport) *SpliceTransport {
	return &SpliceTransport{next: next, idle: map[string][]*spliceConn{}}
}

// handles reports whether t sends req itself: in clear, not through an HTTP
// proxy, and either a GET, HEAD or DELETE without a body or a PUT with a
// small body of known length. All are idempotent, so a request that found
// its kept-alive connection dead may be sent again.
func (t *SpliceTransport) handles(req *http.Request) bool {
	if req.URL.Scheme != "http" {
		return false
	}
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodDelete:
		if hasBody(req) {
			return false
		}
	case http.MethodPut:
		if !hasBody(req) || req.ContentLength <= 0 || req.ContentLength > MaxBufferedPUT {
			return false
		}
	default:
		return false
	}
	if t.next.Proxy != nil {
		if u, err := t.next.Proxy(req); err != nil || u != nil {
			return false
		}
	}
	return true
}

// RoundTrip sends req on t's own connections when handles says so, and
// through the http.Transport t wraps otherwise.
func (t *SpliceTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.handles(req) {
		return t.next.RoundTrip(req)
	}
	var payload []byte // a PUT's body, read whole
	if hasBody(req) {
		buf := requestBodies.Get().(*[]byte)
		defer requestBodies.Put(buf)
		var err error
		if payload, err = readBody(req, (*buf)[:req.ContentLength]); err != nil {
			return nil, err
		}
	}
	addr := hostPort(req.URL)
	for attempt := 0; ; attempt++ {
		// The retry dials: after a backend restart every idle connection
		// is dead, and taking the next one would fail the same way.
		pc, reused, err := t.conn(req.Context(), addr, attempt == 0)
		if err != nil {
			return nil, err
		}
		resp, err := t.exchange(req, payload, pc, addr)
		if err == nil {
			return resp, nil
		}
		// A kept-alive connection that the backend closed while it was idle
		// fails before any byte of the answer; every request sent here may
		// be sent again.
		// A timeout is the backend being slow, not a dead connection.
		var quiet nothingReceivedError
		var netErr net.Error
		timedOut := errors.As(err, &netErr) && netErr.Timeout()
		if reused && attempt == 0 && errors.As(err, &quiet) && !timedOut && req.Context().Err() == nil {
			continue
		}
		return nil, err
	}
}

// nothingReceivedError is a failure before the backend sent any byte.
type nothingReceivedError struct{ err error }

func (e nothingReceivedError) Error() string { return e.err.Error() }
func (e nothingReceivedError) Unwrap() error { return e.err }

// exchange writes req on pc and reads the response head. On error, pc is
// closed.
func (t *SpliceTransport) exchange(req *http.Request, payload []byte, pc *spliceConn, addr string) (*http.Response, error) {
	ctx := req.Context()
	// Cancelling the request closes the connection, which ends any read,
	// write or splice in progress; such a connection is never reused.
	stop := context.AfterFunc(ctx, pc.closeConn)
	fail := func(err error) (*http.Response, error) {
		stop()
		pc.conn.Close()
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("%s %s: %w", req.Method, addr, ctxErr)
		}
		return nil, err
	}
	if err := writeRequest(req, payload, pc); err != nil {
		return fail(nothingReceivedError{fmt.Errorf("write %s to %s: %w", req.Method, addr, err)})
	}
	if d := t.next.ResponseHeaderTimeout; d > 0 {
		_ = pc.conn.SetReadDeadline(time.Now().Add(d))
	}
	if _, err := pc.br.Peek(1); err != nil {
		return fail(nothingReceivedError{fmt.Errorf("read response from %s: %w", addr, err)})
	}
	var resp *http.Response
	var body *splicedBody
	answer, plain := readPlainResponse(pc.br, req)
	if plain {
		resp, body = &answer.Response, &answer.body
	}
	for informational := 0; !plain; informational++ {
		r, err := http.ReadResponse(pc.br, req)
		if err != nil {
			return fail(fmt.Errorf("read response from %s: %w", addr, err))
		}
		if r.StatusCode >= 200 || r.StatusCode == http.StatusSwitchingProtocols {
			resp, body = r, new(splicedBody)
			break
		}
		if informational == 5 {
			return fail(fmt.Errorf("read response from %s: too many 1xx responses", addr))
		}
	}
	if t.next.ResponseHeaderTimeout > 0 {
		_ = pc.conn.SetReadDeadline(time.Time{})
	}
	*body = splicedBody{t: t, pc: pc, addr: addr, stop: stop, reusable: !resp.Close}
	switch {
	case req.Method == http.MethodHead || resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified:
		// No body follows, whatever Content-Length says.
		body.fixedReader = io.LimitedReader{R: pc.br, N: 0}
		body.fixed = &body.fixedReader
	case resp.ContentLength >= 0:
		body.fixedReader = io.LimitedReader{R: pc.br, N: resp.ContentLength}
		body.fixed = &body.fixedReader
	default:
		// Chunked or delimited by close: net/http's reader, no splicing.
		body.framed = resp.Body
		body.reusable = body.reusable && len(resp.TransferEncoding) > 0
	}
	resp.Body = body
	return resp, nil
}

// hostPort is u's host with the port made explicit.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host // already host:port, as JoinHostPort would write it
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

// writerOnly and readerOnly hide ReadFrom and WriteTo, so that io.Copy
// between them does not recurse into them.
type writerOnly struct{ io.Writer }
type readerOnly struct{ io.Reader }

func hasBody(req *http.Request) bool { return req.Body != nil && req.Body != http.NoBody }

// requestBodies holds the buffers small PUT bodies are read into.
var requestBodies = sync.Pool{New: func() any { b := make([]byte, MaxBufferedPUT); return &b }}

// readBody reads req's body, which must be exactly len(dst) bytes long,
// into dst, and closes it.
func readBody(req *http.Request, dst []byte) ([]byte, error) {
	defer req.Body.Close()
	if err := ReadExactly(req.Body, dst); err != nil {
		return nil, err
	}
	return dst, nil
}

// requestWriters write request heads (and small bodies) to connections; a
// pooled writer is large enough for a head and a body of MaxBufferedPUT,
// so both leave in one write, and no connection keeps a write buffer.
var requestWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, MaxBufferedPUT+8<<10) }}

// writeRequest writes req, with payload as its body if it has one, to pc.
func writeRequest(req *http.Request, payload []byte, pc *spliceConn) error {
	bw := requestWriters.Get().(*bufio.Writer)
	bw.Reset(pc.conn)
	err := writeRequestTo(bw, req, payload)
	if err == nil {
		err = bw.Flush()
	}
	bw.Reset(nil)
	requestWriters.Put(bw)
	return err
}

package proxy

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

// SpliceTransport sends GET (and HEAD) requests for plain-HTTP backends
// over its own connections, so that a response body can pass from the
// backend's socket to the client's with splice(2) and never be copied
// through s3cond's memory. Everything else goes to Next unchanged.
//
// Why: for large GETs, reading each byte from one socket and writing it to
// another was 95% of s3cond's CPU time, and halved GET throughput on a
// machine shared with the client and the backend (docs/performance.md).
// net/http's client reads bodies through a bufio.Reader, which hides the
// socket; here the response headers are parsed with http.ReadResponse and the
// body's socket is handed, length-limited, to the client connection's
// ReadFrom, which splices on Linux.
//
// The body splices only when the caller copies it with io.Copy (or calls
// WriteTo) into a writer with a ReadFrom method that reaches a *net.TCPConn;
// plain Read works as with any response.
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

type spliceConn struct {
	conn      net.Conn
	br        *bufio.Reader
	bw        *bufio.Writer
	idleSince time.Time
}

// handles reports whether t sends req itself: a GET or HEAD without a
// body, in clear, and not through an HTTP proxy. HEADs come along because
// every conditional write makes two: sent here, each is one write and one
// read on the calling goroutine, without http.Transport's hand-offs to its
// connection's reader and writer goroutines.
func (t *SpliceTransport) handles(req *http.Request) bool {
	if (req.Method != http.MethodGet && req.Method != http.MethodHead) || req.URL.Scheme != "http" ||
		(req.Body != nil && req.Body != http.NoBody) {
		return false
	}
	if t.next.Proxy != nil {
		if u, err := t.next.Proxy(req); err != nil || u != nil {
			return false
		}
	}
	return true
}

func (t *SpliceTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.handles(req) {
		return t.next.RoundTrip(req)
	}
	addr := hostPort(req.URL)
	for attempt := 0; ; attempt++ {
		// The retry dials: after a backend restart every idle connection
		// is dead, and taking the next one would fail the same way.
		pc, reused, err := t.conn(req.Context(), addr, attempt == 0)
		if err != nil {
			return nil, err
		}
		resp, err := t.exchange(req, pc, addr)
		if err == nil {
			return resp, nil
		}
		// A kept-alive connection that the backend closed while it was idle
		// fails before any byte of the answer: a GET or HEAD may be sent
		// again.
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
func (t *SpliceTransport) exchange(req *http.Request, pc *spliceConn, addr string) (*http.Response, error) {
	ctx := req.Context()
	// Cancelling the request closes the connection, which ends any read,
	// write or splice in progress; such a connection is never reused.
	stop := context.AfterFunc(ctx, func() { pc.conn.Close() })
	fail := func(err error) (*http.Response, error) {
		stop()
		pc.conn.Close()
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("%s %s: %w", req.Method, addr, ctxErr)
		}
		return nil, err
	}
	if err := req.Write(pc.bw); err != nil {
		return fail(nothingReceivedError{fmt.Errorf("write %s to %s: %w", req.Method, addr, err)})
	}
	if err := pc.bw.Flush(); err != nil {
		return fail(nothingReceivedError{fmt.Errorf("write %s to %s: %w", req.Method, addr, err)})
	}
	if d := t.next.ResponseHeaderTimeout; d > 0 {
		_ = pc.conn.SetReadDeadline(time.Now().Add(d))
	}
	if _, err := pc.br.Peek(1); err != nil {
		return fail(nothingReceivedError{fmt.Errorf("read response from %s: %w", addr, err)})
	}
	var resp *http.Response
	for informational := 0; ; informational++ {
		r, err := http.ReadResponse(pc.br, req)
		if err != nil {
			return fail(fmt.Errorf("read response from %s: %w", addr, err))
		}
		if r.StatusCode >= 200 || r.StatusCode == http.StatusSwitchingProtocols {
			resp = r
			break
		}
		if informational == 5 {
			return fail(fmt.Errorf("read response from %s: too many 1xx responses", addr))
		}
	}
	if t.next.ResponseHeaderTimeout > 0 {
		_ = pc.conn.SetReadDeadline(time.Time{})
	}
	body := &splicedBody{t: t, pc: pc, addr: addr, stop: stop, reusable: !resp.Close}
	switch {
	case req.Method == http.MethodHead || resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified:
		// No body follows, whatever Content-Length says.
		body.fixed = &io.LimitedReader{R: pc.br, N: 0}
	case resp.ContentLength >= 0:
		body.fixed = &io.LimitedReader{R: pc.br, N: resp.ContentLength}
	default:
		// Chunked or delimited by close: net/http's reader, no splicing.
		body.framed = resp.Body
		body.reusable = body.reusable && len(resp.TransferEncoding) > 0
	}
	resp.Body = body
	return resp, nil
}

// Each pooled connection keeps its buffers, so they are sized for what
// passes through them: request heads out; response heads, and small bodies
// in one read, in. Bodies past the buffer bypass it.
const (
	spliceReadBufferSize  = 16 << 10
	spliceWriteBufferSize = 4 << 10
)

// minSpliceSize is the smallest remainder of a body worth splicing: a
// splice takes a pipe and two system calls per pass, where a small body
// costs one read and one write. Measured on 4 KiB GETs, whose body often
// arrives just after the headers: splicing it was 5% of s3cond's CPU.
const minSpliceSize = 64 << 10

// splicedBody is a response body read straight from a connection of t.
type splicedBody struct {
	t    *SpliceTransport
	pc   *spliceConn
	addr string
	stop func() bool
	// fixed reads a Content-Length body; framed any other.
	fixed  *io.LimitedReader
	framed io.ReadCloser
	// reusable: the backend keeps the connection open after this body.
	reusable  bool
	framedEOF bool // framed was read to its end
	failed    bool
	closed    bool
}

// complete reports whether the whole body was read.
func (b *splicedBody) complete() bool {
	if b.fixed != nil {
		return b.fixed.N == 0
	}
	return b.framedEOF
}

var _ io.WriterTo = (*splicedBody)(nil)

func (b *splicedBody) Read(p []byte) (int, error) {
	if b.closed {
		return 0, errors.New("read on closed response body")
	}
	var n int
	var err error
	if b.framed != nil {
		n, err = b.framed.Read(p)
		b.framedEOF = err == io.EOF
	} else {
		n, err = b.fixed.Read(p)
		if err == io.EOF && b.fixed.N > 0 {
			err = io.ErrUnexpectedEOF
		}
	}
	if err != nil && err != io.EOF {
		b.failed = true
	}
	return n, err
}

// WriteTo sends the bytes already buffered, then hands the rest of the
// body, as a length-limited socket, to w's ReadFrom: for a client TCP
// connection that is a splice.
func (b *splicedBody) WriteTo(w io.Writer) (int64, error) {
	if b.closed || b.framed != nil || b.fixed.N == 0 {
		return io.Copy(writerOnly{w}, readerOnly{b})
	}
	var written int64
	if buffered := min(int64(b.pc.br.Buffered()), b.fixed.N); buffered > 0 {
		head, _ := b.pc.br.Peek(int(buffered))
		n, err := w.Write(head)
		_, _ = b.pc.br.Discard(n)
		b.fixed.N -= int64(n)
		written += int64(n)
		if err != nil {
			b.failed = true
			return written, err
		}
	}
	if b.fixed.N == 0 {
		return written, nil
	}
	src := &io.LimitedReader{R: b.pc.conn, N: b.fixed.N}
	var n int64
	var err error
	if rf, ok := w.(io.ReaderFrom); ok && b.fixed.N >= minSpliceSize {
		n, err = rf.ReadFrom(src)
	} else {
		buf := copyBuffers.Get().(*[]byte)
		n, err = io.CopyBuffer(writerOnly{w}, readerOnly{src}, *buf)
		copyBuffers.Put(buf)
	}
	written += n
	b.fixed.N = src.N
	if err == nil && b.fixed.N > 0 {
		err = io.ErrUnexpectedEOF
	}
	b.failed = err != nil
	return written, err
}

// Close returns the connection to the pool when the body was read to its
// end and nothing went wrong; otherwise it closes it (with a reset, from
// ResettingDialer), as the http.Transport does with an unfinished body.
func (b *splicedBody) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	cancelled := !b.stop()
	if b.complete() && !b.failed && b.reusable && !cancelled {
		b.t.putIdle(b.addr, b.pc)
		return nil
	}
	return b.pc.conn.Close()
}

// conn returns an idle connection to addr if idleOK and there is one, or
// dials one.
func (t *SpliceTransport) conn(ctx context.Context, addr string, idleOK bool) (pc *spliceConn, reused bool, err error) {
	if idleOK {
		if pc := t.takeIdle(addr); pc != nil {
			return pc, true, nil
		}
	}
	dial := t.next.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	conn, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, false, fmt.Errorf("dial %s: %w", addr, err)
	}
	return &spliceConn{
		conn: conn,
		br:   bufio.NewReaderSize(conn, spliceReadBufferSize),
		bw:   bufio.NewWriterSize(conn, spliceWriteBufferSize),
	}, false, nil
}

func (t *SpliceTransport) takeIdle(addr string) *spliceConn {
	t.mu.Lock()
	defer t.mu.Unlock()
	conns := t.idle[addr]
	for len(conns) > 0 {
		pc := conns[len(conns)-1]
		conns = conns[:len(conns)-1]
		if d := t.next.IdleConnTimeout; d > 0 && time.Since(pc.idleSince) > d {
			pc.conn.Close()
			continue
		}
		t.idle[addr] = conns
		return pc
	}
	delete(t.idle, addr)
	return nil
}

func (t *SpliceTransport) putIdle(addr string, pc *spliceConn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	limit := t.next.MaxIdleConnsPerHost
	if limit <= 0 {
		limit = http.DefaultMaxIdleConnsPerHost
	}
	if len(t.idle[addr]) >= limit {
		pc.conn.Close()
		return
	}
	pc.idleSince = time.Now()
	t.idle[addr] = append(t.idle[addr], pc)
}

// CloseIdleConnections closes the idle connections of t and of Next.
func (t *SpliceTransport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = map[string][]*spliceConn{}
	t.mu.Unlock()
	for _, conns := range idle {
		for _, pc := range conns {
			pc.conn.Close()
		}
	}
	t.next.CloseIdleConnections()
}

// hostPort is u's host with the port made explicit.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// writerOnly and readerOnly hide ReadFrom and WriteTo, so that io.Copy
// between them does not recurse into them.
type writerOnly struct{ io.Writer }
type readerOnly struct{ io.Reader }

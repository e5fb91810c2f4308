package proxy

import (
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/s3cond/s3cond/s3err"
)

// Idle timeouts on the client connection, as S3 has them: a request body
// that stops arriving, or a response the client stops reading, ends the
// request instead of holding a client socket, a backend socket and a lease
// for as long as the client likes.
const (
	// DefaultBodyIdleTimeout is S3's: about 20 s without a byte of the body.
	DefaultBodyIdleTimeout = 20 * time.Second
	// DefaultWriteIdleTimeout bounds a response write that makes no progress.
	DefaultWriteIdleTimeout = 60 * time.Second
)

// writeStep is the most a response write is given one deadline for, so a
// long spliced body renews the deadline as it goes.
const writeStep = 1 << 20

// connDeadlines are the methods net/http's response writer has for the
// connection under it (what http.ResponseController calls); asserting
// them directly costs no allocation.
type connDeadlines interface {
	SetReadDeadline(time.Time) error
	SetWriteDeadline(time.Time) error
}

// deadlinesOf finds the connection deadlines under w and its wrappers, or
// nil (a test recorder).
func deadlinesOf(w http.ResponseWriter) connDeadlines {
	for {
		if d, ok := w.(connDeadlines); ok {
			return d
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return nil
		}
		w = u.Unwrap()
	}
}

// idleBody is the client's request body with a read deadline renewed on
// every read: a body that sends nothing for timeout fails with S3's 400
// RequestTimeout. net/http cancels the request's context as the read times
// out, which aborts the backend request (with a reset: nothing is stored)
// and releases any lease. The deadline is cleared at the body's end, so it
// cannot touch net/http's own read of the next request.
type idleBody struct {
	body    io.ReadCloser
	conn    connDeadlines
	timeout time.Duration
	// until, when set, is a total deadline no read may pass, however
	// steadily the bytes arrive (the form phase of POST Object).
	until    time.Time
	finished bool
}

func (b *idleBody) Read(p []byte) (int, error) {
	if b.finished {
		return b.body.Read(p)
	}
	deadline := time.Now().Add(b.timeout)
	if !b.until.IsZero() && b.until.Before(deadline) {
		deadline = b.until
	}
	_ = b.conn.SetReadDeadline(deadline)
	n, err := b.body.Read(p)
	if err != nil {
		b.finished = true
		if err != io.EOF && isTimeout(err) {
			// The deadline stays expired: net/http's attempt to drain the
			// rest of the body before answering fails at once, and the
			// connection is closed after the 400.
			return n, s3err.Wrap(s3err.RequestTimeout, err)
		}
		_ = b.conn.SetReadDeadline(time.Time{})
	}
	return n, err
}

func (b *idleBody) Close() error { return b.body.Close() }

// limitBodyIdle puts the body idle timeout on c's request body. The
// wrapper lives in the request's info, so a request pays no allocation.
func (p *Proxy) limitBodyIdle(c *call) {
	r := c.r
	if p.bodyIdleTimeout <= 0 || r.Body == nil || r.Body == http.NoBody {
		return
	}
	conn := deadlinesOf(c.w)
	if conn == nil {
		return
	}
	c.info.body = idleBody{body: r.Body, conn: conn, timeout: p.bodyIdleTimeout}
	r.Body = &c.info.body
}

// renewWriteDeadline gives the next write to the client writeIdle to make
// progress (none when no timeout is set or the writer has no connection).
func (s *statusRecorder) renewWriteDeadline() {
	if s.conn != nil && s.writeIdle > 0 {
		_ = s.conn.SetWriteDeadline(time.Now().Add(s.writeIdle))
	}
}

// readFromInSteps copies src to the client in steps of at most writeStep
// bytes, each with a fresh write deadline. A length-bounded socket (a
// spliced response body) stays one, so each step still splices; any other
// reader is copied through Write, which renews the deadline per write.
func (s *statusRecorder) readFromInSteps(rf io.ReaderFrom, src io.Reader) (int64, error) {
	lr, ok := src.(*io.LimitedReader)
	if !ok {
		buf := copyBuffers.Get().(*[]byte)
		defer copyBuffers.Put(buf)
		return io.CopyBuffer(renewingWriter{s}, readerOnly{src}, *buf)
	}
	var total int64
	for lr.N > 0 {
		s.renewWriteDeadline()
		step := lr
		if lr.N > writeStep {
			step = &io.LimitedReader{R: lr.R, N: writeStep}
		}
		before := step.N
		n, err := rf.ReadFrom(step)
		if step != lr {
			lr.N -= n
		}
		total += n
		if err != nil || n < before {
			return total, err
		}
	}
	return total, nil
}

// renewingWriter writes to the client, each write with a fresh deadline;
// it counts nothing (ReadFrom counts what it copied).
type renewingWriter struct{ s *statusRecorder }

func (w renewingWriter) Write(p []byte) (int, error) {
	w.s.renewWriteDeadline()
	return w.s.ResponseWriter.Write(p)
}

// orDefault is d, or def when d is zero.
func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// isTimeout reports whether err is a network timeout.
func isTimeout(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) && netErr.Timeout()
}

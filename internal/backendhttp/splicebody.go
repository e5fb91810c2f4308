package backendhttp

import (
	"errors"
	"io"
)

// minSpliceSize is the smallest remainder of a body worth splicing: a
// splice takes a pipe and two system calls per pass, where a small body
// costs one read and one write. Measured on 4 KiB GETs, whose body often
// arrives just after the headers: splicing it was 5% of s3cond's CPU.
const minSpliceSize = 64 << 10

// errBodyClosed answers reads of a splicedBody after Close.
var errBodyClosed = errors.New("read on closed response body")

// splicedBody is a response body read straight from a connection of t.
type splicedBody struct {
	t    *SpliceTransport
	pc   *spliceConn
	addr string
	stop func() bool
	// fixed reads a Content-Length body; framed any other.
	fixed *io.LimitedReader
	// fixedReader is fixed's storage, in the body's own allocation.
	fixedReader io.LimitedReader
	framed      io.ReadCloser
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
		return 0, errBodyClosed
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
	switch {
	case b.closed:
		return 0, errBodyClosed
	case b.framed != nil:
		buf := copyBuffers.Get().(*[]byte)
		defer copyBuffers.Put(buf)
		return io.CopyBuffer(writerOnly{w}, readerOnly{b}, *buf)
	case b.fixed.N == 0:
		// Nothing (left) to send: the answer to a PUT, DELETE or HEAD.
		return 0, nil
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

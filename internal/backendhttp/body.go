package backendhttp

import (
	"errors"
	"io"
	"sync"
)

// MaxBufferedPUT is the largest PUT body SpliceTransport reads whole, and
// so has verified, before it sends the request; larger bodies go to the
// net/http transport, which streams them.
const MaxBufferedPUT = 64 << 10

// ErrShortBody and ErrLongBody are a request body that ended before, or
// went on past, the length it declared.
var (
	ErrShortBody = errors.New("request body shorter than its declared length")
	ErrLongBody  = errors.New("request body longer than its declared length")
)

// ReadExactly fills dst from r and reads r on to its end: a verifying body
// makes its final checks there, so an error is the body's own (a failed
// signature or checksum, a client gone), or ErrShortBody or ErrLongBody
// when its length is not len(dst).
func ReadExactly(r io.Reader, dst []byte) error {
	if _, err := io.ReadFull(r, dst); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || len(dst) > 0 && err == io.EOF {
			return ErrShortBody
		}
		return err
	}
	var extra [1]byte
	for {
		n, err := r.Read(extra[:])
		switch {
		case n > 0:
			return ErrLongBody
		case err == io.EOF:
			return nil
		case err != nil:
			return err
		}
	}
}

// copyBuffers are the buffers of the bodies that are copied rather than
// spliced.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

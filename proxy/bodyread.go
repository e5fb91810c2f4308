package proxy

import (
	"errors"
	"io"

	"github.com/s3cond/s3cond/s3err"
)

// maxBufferedBody is the largest body s3cond holds in memory whole: a
// conditional write's body up to this size is read, and verified, before
// its lease is sought, and SpliceTransport reads a PUT body up to this size
// before it sends the request. Larger bodies stream.
const maxBufferedBody = 64 << 10

// readWhole reads r, which must hold exactly length bytes, on to its end,
// where a verifying body makes its final checks. The buffer is its own, not
// a pooled one: net/http's transport may still read a request body after
// the response has come back.
func readWhole(r io.Reader, length int64) ([]byte, error) {
	body := make([]byte, length)
	if err := readExactly(r, body); err != nil {
		return nil, err
	}
	return body, nil
}

// readExactly fills dst from r and reads r on to its end: a verifying body
// makes its final checks there, so an error is the body's own (a failed
// signature or checksum, a client gone) or a length that does not match.
func readExactly(r io.Reader, dst []byte) error {
	if _, err := io.ReadFull(r, dst); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || len(dst) > 0 && err == io.EOF {
			return s3err.New(s3err.IncompleteBody)
		}
		return err
	}
	var extra [1]byte
	for {
		n, err := r.Read(extra[:])
		switch {
		case n > 0:
			return s3err.Newf(s3err.InvalidRequest, "The body is longer than its declared length.")
		case err == io.EOF:
			return nil
		case err != nil:
			return err
		}
	}
}

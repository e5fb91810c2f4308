package proxy

import (
	"errors"
	"io"

	"github.com/s3cond/s3cond/internal/backendhttp"
	"github.com/s3cond/s3cond/s3err"
)

// maxBufferedBody is the largest body s3cond holds in memory whole: a
// conditional write's body up to this size is read, and verified, before
// its lease is sought. Larger bodies stream. It is the size
// backendhttp.SpliceTransport reads a PUT body to, so a body read whole here
// leaves for the backend in one write.
const maxBufferedBody = backendhttp.MaxBufferedPUT

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

// readExactly fills dst from r and reads r on to its end (see
// backendhttp.ReadExactly), with a length that does not match as the S3
// error a client gets for it.
func readExactly(r io.Reader, dst []byte) error {
	return bodyLengthError(backendhttp.ReadExactly(r, dst))
}

// bodyLengthError turns backendhttp's body-length errors into S3's; any
// other error is returned as it is.
func bodyLengthError(err error) error {
	switch {
	case errors.Is(err, backendhttp.ErrShortBody):
		return s3err.Wrap(s3err.IncompleteBody, err)
	case errors.Is(err, backendhttp.ErrLongBody):
		e := s3err.Newf(s3err.InvalidRequest, "The body is longer than its declared length.")
		e.Cause = err
		return e
	}
	return err
}

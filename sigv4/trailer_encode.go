package sigv4

import (
	"encoding/base64"
	"errors"
	"io"
	"strconv"

	"github.com/s3cond/s3cond/s3err"
)

// EncodeUnsignedTrailer re-frames the verified decoded payload of body as a
// STREAMING-UNSIGNED-PAYLOAD-TRAILER aws-chunked stream, with chunks of
// chunkSize bytes and the trailing checksum body verified (if x-amz-trailer
// declared one), so the backend can check the client's checksum itself.
//
// length is the exact encoded length, computable up front from body.Length()
// and the checksum's base64 width; it is -1 when body.Length() is unknown.
// The final chunk and the trailer are produced only after body returned
// io.EOF, so a failed verification surfaces as the reader's error before the
// stream could end.
func EncodeUnsignedTrailer(body *Body, chunkSize int) (r io.Reader, length int64) {
	if chunkSize <= 0 {
		chunkSize = 64 << 10
	}
	e := &trailerEncoder{body: body, chunkSize: int64(chunkSize), remaining: body.Length()}
	return e, encodedUnsignedTrailerLength(body.Length(), int64(chunkSize), body.TrailerChecksumName(), trailerValueWidth(body))
}

func trailerValueWidth(body *Body) int {
	if !body.checksumTrailer {
		return 0
	}
	return body.checksum.encodedLength()
}

// encodedUnsignedTrailerLength is the size of the stream trailerEncoder
// writes for a payload of decodedLength bytes.
func encodedUnsignedTrailerLength(decodedLength, chunkSize int64, trailerName string, valueWidth int) int64 {
	if decodedLength < 0 {
		return -1
	}
	frame := func(size int64) int64 {
		return int64(len(strconv.FormatInt(size, 16))) + 2 + size + 2
	}
	full, rest := decodedLength/chunkSize, decodedLength%chunkSize
	total := full * frame(chunkSize)
	if rest > 0 {
		total += frame(rest)
	}
	total += int64(len("0\r\n"))
	if trailerName != "" {
		total += int64(len(trailerName)+1+valueWidth) + 2
	}
	return total + 2
}

// trailerEncoder produces the aws-chunked stream of EncodeUnsignedTrailer.
type trailerEncoder struct {
	body      *Body
	chunkSize int64
	remaining int64  // payload bytes not yet passed on; -1 unknown
	chunkLeft int64  // data bytes left in the current chunk
	pending   []byte // framing bytes waiting to be written
	finished  bool   // the final chunk and trailer are in pending
	err       error
}

func (e *trailerEncoder) Read(p []byte) (int, error) {
	for len(e.pending) == 0 {
		if e.err != nil {
			return 0, e.err
		}
		if e.chunkLeft > 0 {
			return e.readData(p)
		}
		if e.finished {
			e.err = io.EOF
			continue
		}
		e.nextFrame()
	}
	n := copy(p, e.pending)
	e.pending = e.pending[n:]
	return n, nil
}

// nextFrame queues the header of the next data chunk, or, once the payload
// is complete and verified, the final chunk and trailer.
func (e *trailerEncoder) nextFrame() {
	if e.remaining < 0 {
		e.err = s3err.Wrap(s3err.InternalError, errors.New("re-framing a body of unknown length"))
		return
	}
	if e.remaining > 0 {
		e.chunkLeft = min(e.chunkSize, e.remaining)
		e.pending = append(strconv.AppendInt(nil, e.chunkLeft, 16), '\r', '\n')
		return
	}
	// Read past the end: the body runs its final checks here.
	var probe [1]byte
	n, err := e.body.Read(probe[:])
	switch {
	case n > 0:
		e.err = s3err.Wrap(s3err.InternalError, errors.New("body longer than its verified length"))
		return
	case err == nil:
		return // no progress yet; try again
	case err != io.EOF:
		e.err = err
		return
	}
	final := []byte("0\r\n")
	if name := e.body.TrailerChecksumName(); name != "" {
		final = append(final, name...)
		final = append(final, ':')
		final = append(final, base64.StdEncoding.EncodeToString(e.body.checksumExpected)...)
		final = append(final, '\r', '\n')
	}
	e.pending = append(final, '\r', '\n')
	e.finished = true
}

func (e *trailerEncoder) readData(p []byte) (int, error) {
	if int64(len(p)) > e.chunkLeft {
		p = p[:e.chunkLeft]
	}
	n, err := e.body.Read(p)
	e.chunkLeft -= int64(n)
	e.remaining -= int64(n)
	if e.chunkLeft == 0 && n > 0 {
		e.pending = []byte("\r\n")
	}
	switch {
	case err == io.EOF && e.remaining == 0:
		// The body's last bytes came with its end: it is whole. (Body's
		// readers hold io.EOF back for a Read of their own today, so
		// this keeps the encoder right should one stop doing so;
		// proxy's framedBody meets such readers: its
		// TestFramedBodySourceEndingWithItsLastBytes.)
		err = nil
	case err == io.EOF:
		// The body ended before its verified length: never end the stream.
		err = s3err.Wrap(s3err.IncompleteBody, io.ErrUnexpectedEOF)
	}
	if err != nil {
		e.err = err
	}
	return n, err
}

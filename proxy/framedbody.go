package proxy

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/crc64"
	"io"
	"net/http"
	"strconv"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/s3err"
	"github.com/s3cond/s3cond/sigv4"
)

// framedTrailer is the checksum s3cond appends to a framed body. It is
// CRC64NVME because a store records the trailer as the object's checksum:
// S3 records CRC64NVME for an upload sent without one, so the store ends up
// with what S3 would have (a CRC32 trailer left the object without the
// CRC64NVME that clients read back).
const framedTrailer = "x-amz-checksum-crc64nvme"

// framedBody re-frames an upload's verified body as an unsigned
// aws-chunked stream whose end the store must see (SPEC §4): the final
// zero-length chunk and its CRC64NVME trailer are produced only after the source
// verified (io.EOF) and gate allowed the write. A body that fails before its
// end therefore reaches the store without a final chunk, which it must
// refuse however the connection closes (a FIN from a proxy on the way as
// much as a reset); one that fails at its end (a signed SHA-256 that does
// not match, a lost lease) gets a trailer with a deliberately wrong CRC,
// which the store refuses (BadDigest) even if it read the stream to the
// end. The hold-back reader in front still withholds the final byte, so
// either way the store sees an unfinished request too.
type framedBody struct {
	src       io.Reader
	gate      func() error
	chunkLeft int64  // data bytes left in the current chunk
	remaining int64  // payload bytes not yet passed on
	crc       uint64 // CRC64NVME of the payload passed on so far
	pending   []byte // framing bytes waiting to be read
	done      bool   // the final chunk is queued
	failure   error  // why the trailer is wrong; returned after it
	// framing holds pending's bytes: a chunk header, a chunk's CRLF or the
	// final chunk with its trailer (44 bytes), each queued only once the
	// one before was read, so a small PUT frames without an allocation.
	framing [64]byte
}

// initFramedBody frames length (> 0) verified bytes of src into f, which
// may live inside a larger allocation (outboundBody).
func initFramedBody(f *framedBody, src io.Reader, length int64, gate func() error) {
	*f = framedBody{src: src, gate: gate, remaining: length}
}

// framedLength is the size of the stream framedBody writes for length
// payload bytes, known up front so the request keeps a Content-Length.
func framedLength(length int64) int64 {
	frame := func(size int64) int64 { return int64(len(strconv.FormatInt(size, 16))) + 2 + size + 2 }
	full, rest := length/trailerChunkSize, length%trailerChunkSize
	total := full * frame(trailerChunkSize)
	if rest > 0 {
		total += frame(rest)
	}
	crcWidth := int64(base64.StdEncoding.EncodedLen(crc64.Size))
	return total + int64(len("0\r\n")) + int64(len(framedTrailer)+1) + crcWidth + 2 + 2
}

// setFramedHeader sets what the store needs to read a framed body of
// length decoded bytes (framesBody leaves a body with a Content-Encoding
// unframed), its values in values (one array for the four, in the
// request's own outbound body, not a map and a slice each).
func setFramedHeader(h http.Header, length int64, values *[4]string) {
	*values = [4]string{"aws-chunked", strconv.FormatInt(length, 10), framedTrailer, streamingUnsignedTrailer}
	h["Content-Encoding"] = values[0:1:1]
	h["X-Amz-Decoded-Content-Length"] = values[1:2:2]
	h["X-Amz-Trailer"] = values[2:3:3]
	h["X-Amz-Content-Sha256"] = values[3:4:4]
}

func (f *framedBody) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		switch {
		case f.done && f.failure != nil:
			return 0, f.failure
		case f.done:
			return 0, io.EOF
		case f.chunkLeft > 0:
			return f.readData(p)
		case f.remaining > 0:
			f.chunkLeft = min(trailerChunkSize, f.remaining)
			f.pending = append(strconv.AppendInt(f.framing[:0], f.chunkLeft, 16), '\r', '\n')
		default:
			if err := f.finish(); err != nil {
				return 0, err
			}
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

func (f *framedBody) readData(p []byte) (int, error) {
	if int64(len(p)) > f.chunkLeft {
		p = p[:f.chunkLeft]
	}
	n, err := f.src.Read(p)
	f.crc = sigv4.UpdateCRC64NVME(f.crc, p[:n])
	f.chunkLeft -= int64(n)
	f.remaining -= int64(n)
	if f.chunkLeft == 0 && n > 0 {
		f.pending = append(f.framing[:0], "\r\n"...)
	}
	switch {
	case err == io.EOF && f.remaining == 0:
		// The source's last bytes came with its end (a reader may say
		// both at once): the payload is whole; finish frames it.
		err = nil
	case err == io.EOF:
		// Shorter than its verified length: never end the stream.
		err = s3err.Wrap(s3err.IncompleteBody, io.ErrUnexpectedEOF)
	}
	if err != nil {
		return n, err
	}
	return n, nil
}

// finish reads the source past its end, where it runs its final checks,
// then the gate, and queues the final chunk: with the true CRC if both
// passed, a wrong one if not. A source still failing mid-way (an error
// other than at its end) leaves the stream unfinished.
func (f *framedBody) finish() error {
	var probe [1]byte
	n, err := f.src.Read(probe[:])
	switch {
	case n > 0:
		return s3err.Wrap(s3err.InternalError, errors.New("body longer than its verified length"))
	case err == nil:
		return nil // no progress yet; Read asks again
	case err != io.EOF:
		f.failure = err
	case f.gate != nil:
		f.failure = f.gate()
	}
	sum := f.crc
	if f.failure != nil {
		sum = ^sum
	}
	var raw [crc64.Size]byte
	binary.BigEndian.PutUint64(raw[:], sum)
	final := append(f.framing[:0], "0\r\n"+framedTrailer+":"...)
	final = base64.StdEncoding.AppendEncode(final, raw[:])
	f.pending = append(final, "\r\n\r\n"...)
	f.done = true
	return nil
}

// framesBody reports whether a PutObject's body goes to the store framed,
// leased or not (issue 33: an unconditional PUT whose body failed its
// signed SHA-256 was stored through a FIN-closing hop): the backend reads
// such streams, the length is known, and no checksum of the client's
// travels with it (a second checksum beside the client's would be refused;
// that case keeps the hold-back only, docs/spec.md §4). A body with a
// Content-Encoding of the client's (outbound: aws-chunked already
// removed) is not framed either: S3 stores the value without aws-chunked,
// but a store may keep "aws-chunked,gzip" as the object's encoding
// (versitygw does), which would change what the object says it is.
func framesBody(c *call, spec forwardSpec, outbound http.Header) bool {
	if !c.backend.FramedBodies || c.op != operation.PutObject || spec.length <= 0 || spec.header != nil {
		return false
	}
	if outbound.Get("Content-Encoding") != "" {
		return false
	}
	if c.backend.ForwardChecksums {
		for name := range c.r.Header {
			if isChecksumHeader(name) || name == "X-Amz-Trailer" {
				return false
			}
		}
	}
	return true
}

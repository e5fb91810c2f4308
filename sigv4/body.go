package sigv4

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/s3cond/s3cond/s3err"
)

// BodySpec describes how a client's request body is framed and what it must
// verify against; the verifier fills it from the authenticated request.
type BodySpec struct {
	Mode          PayloadMode
	PayloadSHA256 string // hex digest for PayloadSHA256 mode
	ContentLength int64  // r.ContentLength as received (-1 unknown)
	// Header is the request header: Content-MD5, x-amz-checksum-*,
	// x-amz-trailer, x-amz-decoded-content-length,
	// x-amz-sdk-checksum-algorithm, Content-Encoding.
	Header http.Header
	Chunk  *ChunkSigning // non-nil for the two signed streaming modes
	// ObjectChecksumHeaders says the x-amz-checksum-* headers (and
	// x-amz-sdk-checksum-algorithm) describe an object other than this body:
	// on CompleteMultipartUpload they are the whole object's checksum
	// (full-object, or composite "<base64>-N"), which only the store can
	// check. They are then neither parsed nor verified here; a trailer,
	// which can only describe the body, still is.
	ObjectChecksumHeaders bool
}

// Body is a client's request body that yields the decoded payload and
// verifies it. Read returns io.EOF only after every check passed; otherwise,
// on the Read that would have ended the stream (or earlier), it returns a
// *s3err.Error. A consumer that holds back the last bytes until io.EOF
// therefore never releases an unverified body.
type Body struct {
	client  io.Reader
	payload io.Reader
	decoder *chunkedDecoder // nil unless the body is aws-chunked

	length        int64
	payloadSHA256 []byte // expected, PayloadSHA256 mode
	payloadHash   hash.Hash

	checksum         *checksumAlgorithm // header or declared trailer checksum
	checksumTrailer  bool               // the checksum arrives as a trailer
	checksumExpected []byte
	checksumValue    string // base64 as the client sent it; for a trailer, set once verified
	checksumHash     hash.Hash

	md5Expected []byte
	md5Hash     hash.Hash

	hashes []hash.Hash // fed with every decoded byte
	err    error       // sticky: io.EOF after success, or the *s3err.Error

	// Storage for the above, in the Body's own allocation: a request
	// allocated each of them separately.
	exact         exactLengthReader
	hashStore     [3]hash.Hash // payload, checksum, MD5
	payloadDigest [sha256.Size]byte
	sum           [64]byte // for Sum at the end; the largest digest is SHA-512's

	// started is set by the first Read; atomic because a transport may read
	// the body on its own goroutine while the handler asks.
	started atomic.Bool
}

// NewBody wraps the raw client body r. Problems visible in the headers are
// reported here, with the codes Amazon S3 uses for them.
func NewBody(r io.Reader, spec BodySpec) (*Body, error) {
	b := new(Body)
	if err := b.init(r, spec); err != nil {
		return nil, err
	}
	return b, nil
}

// init is NewBody for a Body the caller allocated (the verifier keeps it
// in its Request, in one allocation).
func (b *Body) init(r io.Reader, spec BodySpec) error {
	header := spec.Header
	if header == nil {
		header = http.Header{}
	}
	b.client, b.length = r, spec.ContentLength
	b.hashes = b.hashStore[:0]

	md5Expected, err := contentMD5(header)
	if err != nil {
		return err
	}
	if md5Expected != nil {
		b.md5Expected, b.md5Hash = md5Expected, md5.New()
		b.hashes = append(b.hashes, b.md5Hash)
	}

	if err := b.setUpChecksum(header, spec.Mode, spec.ObjectChecksumHeaders); err != nil {
		return err
	}

	switch spec.Mode {
	case PayloadUnsigned:
		b.exact = exactLengthReader{r: r, left: spec.ContentLength}
		b.payload = &b.exact
	case PayloadSHA256:
		if !decodeHex(b.payloadDigest[:], spec.PayloadSHA256) {
			// S3's answer to an x-amz-content-sha256 that is neither a
			// known mode nor a digest.
			return s3err.Newf(s3err.InvalidArgument,
				"x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-UNSIGNED-PAYLOAD-TRAILER, STREAMING-AWS4-HMAC-SHA256-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER or a valid sha256 value.").
				With("ArgumentName", "x-amz-content-sha256")
		}
		b.payloadSHA256 = b.payloadDigest[:]
		if spec.ContentLength != 0 {
			// A body of length 0 has the empty hash, and exactLengthReader
			// lets no byte through: nothing to hash (verifyEnd).
			b.payloadHash = payloadHashers.Get().(hash.Hash)
			b.payloadHash.Reset()
			b.hashes = append(b.hashes, b.payloadHash)
		}
		b.exact = exactLengthReader{r: r, left: spec.ContentLength}
		b.payload = &b.exact
	case PayloadStreamingSigned, PayloadStreamingSignedTrailer, PayloadStreamingUnsignedTrailer:
		decodedLength, err := decodedContentLength(header)
		if err != nil {
			return err
		}
		var chain *signatureChain
		if spec.Mode != PayloadStreamingUnsignedTrailer {
			if spec.Chunk == nil {
				return s3err.Wrap(s3err.InternalError, errors.New("signed aws-chunked body without chunk signing parameters"))
			}
			chain = newSignatureChain(spec.Chunk)
		}
		b.length = decodedLength
		b.decoder = newChunkedDecoder(r, chain, spec.Mode != PayloadStreamingSigned, decodedLength, spec.ContentLength)
		b.payload = b.decoder
	default:
		return s3err.Wrap(s3err.InternalError, errors.New("unknown payload mode "+strconv.Itoa(int(spec.Mode))))
	}
	return nil
}

// setUpChecksum finds the one x-amz-checksum-* the client sent, as a header
// or declared in x-amz-trailer, and checks x-amz-sdk-checksum-algorithm
// against it. With objectHeaders the headers describe another object (see
// BodySpec.ObjectChecksumHeaders) and only a trailer is taken.
func (b *Body) setUpChecksum(header http.Header, mode PayloadMode, objectHeaders bool) error {
	trailerAlg, err := declaredTrailer(header, mode)
	if err != nil {
		return err
	}
	if objectHeaders {
		if trailerAlg != nil {
			b.takeChecksum(trailerAlg, nil, "", true)
		}
		return nil
	}
	alg, digest, value, err := headerChecksum(header)
	if err != nil {
		return err
	}
	if alg != nil && trailerAlg != nil {
		return errMultipleChecksums()
	}
	if trailerAlg != nil {
		alg = trailerAlg
	}
	if sdkAlgorithm := strings.TrimSpace(header.Get("X-Amz-Sdk-Checksum-Algorithm")); sdkAlgorithm != "" {
		named, known := checksumByName(sdkAlgorithm)
		switch {
		case !known:
			return s3err.Newf(s3err.InvalidRequest, "Value for x-amz-sdk-checksum-algorithm header is invalid.")
		case alg == nil:
			return s3err.Newf(s3err.InvalidRequest, "x-amz-sdk-checksum-algorithm specified, but no corresponding x-amz-checksum-* or x-amz-trailer headers were found.")
		case named != alg:
			return s3err.Newf(s3err.InvalidRequest, "Value for x-amz-sdk-checksum-algorithm header is invalid.")
		}
	}
	if alg != nil {
		b.takeChecksum(alg, digest, value, trailerAlg != nil)
	}
	return nil
}

// takeChecksum makes the body verify alg; digest and value are known now for
// a header, at the end for a trailer.
func (b *Body) takeChecksum(alg *checksumAlgorithm, digest []byte, value string, trailer bool) {
	b.checksum, b.checksumExpected, b.checksumValue, b.checksumTrailer = alg, digest, value, trailer
	b.checksumHash = alg.newHash()
	b.hashes = append(b.hashes, b.checksumHash)
}

// declaredTrailer returns the checksum algorithm x-amz-trailer names. S3
// accepts exactly one trailer, a supported x-amz-checksum-*, and only with a
// payload mode that has a trailer section; anything else would make a
// checksum look checked that never arrives, so it is refused up front.
func declaredTrailer(header http.Header, mode PayloadMode) (*checksumAlgorithm, error) {
	var names []string
	for _, v := range header.Values("X-Amz-Trailer") {
		for name := range strings.SplitSeq(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				names = append(names, name)
			}
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	unsupported := s3err.Newf(s3err.InvalidRequest, "The value specified in the x-amz-trailer header is not supported")
	if len(names) > 1 || (mode != PayloadStreamingSignedTrailer && mode != PayloadStreamingUnsignedTrailer) {
		return nil, unsupported
	}
	alg, ok := checksumByHeader(names[0])
	if !ok {
		return nil, unsupported
	}
	return alg, nil
}

// decodedContentLength reads x-amz-decoded-content-length, which S3 requires
// for every aws-chunked upload: 411 MissingContentLength without it, and
// without a length it can read (S3 answers an unreadable value the same).
func decodedContentLength(header http.Header) (int64, error) {
	raw := strings.TrimSpace(header.Get("X-Amz-Decoded-Content-Length"))
	if raw == "" {
		return 0, s3err.New(s3err.MissingContentLength)
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n < 0 || raw[0] == '+' {
		return 0, s3err.Wrap(s3err.MissingContentLength, errors.New("x-amz-decoded-content-length "+strconv.Quote(raw)+" is not a length"))
	}
	return n, nil
}

// Read yields the decoded payload; see Body.
func (b *Body) Read(p []byte) (int, error) {
	if !b.started.Load() {
		b.started.Store(true)
	}
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.payload.Read(p)
	if n > 0 {
		for _, h := range b.hashes {
			h.Write(p[:n])
		}
	}
	switch {
	case err == nil:
		return n, nil
	case err == io.EOF:
		err = b.verifyEnd()
	default:
		err = truncatedError(err)
	}
	b.err = err
	return n, err
}

// verifyEnd runs the whole-payload checks once the payload ended. It returns
// io.EOF when all of them passed.
func (b *Body) verifyEnd() error {
	if b.decoder != nil {
		if err := b.takeTrailers(b.decoder.Trailers()); err != nil {
			return err
		}
	}
	b.hashes = nil // the payload ended: nothing more is written to them
	if b.payloadSHA256 != nil {
		computed := emptyPayloadDigest[:]
		if b.payloadHash != nil {
			computed = b.payloadHash.Sum(b.sum[:0])
			payloadHashers.Put(b.payloadHash)
			b.payloadHash = nil
		}
		if !bytes.Equal(computed, b.payloadSHA256) {
			return s3err.New(s3err.XAmzContentSHA256Mismatch).
				With("ClientComputedContentSHA256", hex.EncodeToString(b.payloadSHA256)).
				With("S3ComputedContentSHA256", hex.EncodeToString(computed))
		}
	}
	if b.checksumHash != nil && !bytes.Equal(b.checksumHash.Sum(b.sum[:0]), b.checksumExpected) {
		return b.checksum.mismatchError()
	}
	if b.md5Hash != nil && !bytes.Equal(b.md5Hash.Sum(b.sum[:0]), b.md5Expected) {
		return s3err.New(s3err.BadDigest)
	}
	return io.EOF
}

// takeTrailers accepts the trailer section: exactly the checksum that
// x-amz-trailer declared, and nothing else.
func (b *Body) takeTrailers(fields []trailerField) error {
	found := false
	for _, f := range fields {
		if !b.checksumTrailer || f.name != b.checksum.header || found {
			return malformedTrailer("undeclared or repeated trailer " + f.name)
		}
		digest, ok := b.checksum.decodeChecksum(f.value)
		if !ok {
			return b.checksum.invalidValueError("trailing header")
		}
		b.checksumExpected, b.checksumValue, found = digest, f.value, true
	}
	if b.checksumTrailer && !found {
		return malformedTrailer("declared trailer " + b.checksum.header + " is missing")
	}
	return nil
}

// Started reports whether anything has read the body yet. A request refused
// before that still has its whole body on the wire.
func (b *Body) Started() bool { return b.started.Load() }

// Close closes the underlying client body.
func (b *Body) Close() error {
	if c, ok := b.client.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Length is the decoded payload length if known up front (Content-Length, or
// x-amz-decoded-content-length for aws-chunked bodies), else -1.
func (b *Body) Length() int64 { return b.length }

// PayloadSHA256 is the hex SHA-256 of the payload known before reading
// (PayloadSHA256 mode), else "".
func (b *Body) PayloadSHA256() string {
	if b.payloadSHA256 == nil {
		return ""
	}
	return hex.EncodeToString(b.payloadSHA256)
}

// Checksum returns the client's checksum as header name (for example
// "x-amz-checksum-crc32") and base64 value. A header checksum is available at
// once, a trailing one only after Read returned io.EOF; ok is false otherwise
// or when the client sent none.
func (b *Body) Checksum() (name, value string, ok bool) {
	if b.checksum == nil || (b.checksumTrailer && b.err != io.EOF) {
		return "", "", false
	}
	return b.checksum.header, b.checksumValue, true
}

// TrailerChecksumName is the x-amz-checksum-* named by x-amz-trailer, or "".
func (b *Body) TrailerChecksumName() string {
	if !b.checksumTrailer {
		return ""
	}
	return b.checksum.header
}

// StripAWSChunked removes the aws-chunked coding from a Content-Encoding
// value, alone or within a list, and returns what remains (possibly ""), for
// forwarding a decoded body with its other codings intact.
func StripAWSChunked(contentEncoding string) string {
	var kept []string
	for coding := range strings.SplitSeq(contentEncoding, ",") {
		coding = strings.TrimSpace(coding)
		if coding != "" && !strings.EqualFold(coding, "aws-chunked") {
			kept = append(kept, coding)
		}
	}
	return strings.Join(kept, ", ")
}

// payloadHashers are SHA-256 states for x-amz-content-sha256, returned
// once a body's digest was taken (verifyEnd): a new one per upload cost an
// allocation of a third of a kilobyte.
var payloadHashers = sync.Pool{New: func() any { return sha256.New() }}

// emptyPayloadDigest is the SHA-256 of no bytes.
var emptyPayloadDigest = sha256.Sum256(nil)

// exactLengthReader passes a body through and fails it when it is shorter
// or longer than Content-Length (left < 0: length unknown, no check).
type exactLengthReader struct {
	r    io.Reader
	left int64
}

func (e *exactLengthReader) Read(p []byte) (int, error) {
	if e.left < 0 {
		return e.r.Read(p)
	}
	if e.left == 0 {
		// Probe for a clean end so extra bytes are never passed on.
		var probe [1]byte
		n, err := e.r.Read(probe[:])
		if n > 0 {
			return 0, incompleteBody("request body is longer than Content-Length")
		}
		return 0, err
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	if err == io.EOF && e.left > 0 {
		return n, truncatedError(err)
	}
	if err == io.EOF && n > 0 {
		err = nil // the next Read probes for the end again
	}
	return n, err
}

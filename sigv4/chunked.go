package sigv4

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"strconv"
	"strings"

	"github.com/s3cond/s3cond/s3err"
)

const (
	// maxChunkLineLength bounds a chunk header or trailer line (without CRLF).
	// A signed header is about 85 bytes; the bound leaves room for extensions
	// while keeping a hostile client from making us buffer an endless line.
	maxChunkLineLength = 4096
	// chunkedBufferSize must exceed maxChunkLineLength+2 so one ReadSlice can
	// hold a whole permitted line. Chunk data bypasses the buffer whenever the
	// caller reads more than it holds, so large chunks never accumulate.
	chunkedBufferSize = 8192
	// maxTrailerLines bounds the trailer section; S3 allows one checksum and
	// its signature.
	maxTrailerLines = 8
	// maxChunkSizeDigits is the most hex digits a chunk size may have (2^63-1).
	maxChunkSizeDigits = 16
	// minChunkSize is S3's smallest chunk but the last data chunk (and the
	// final empty one): a stream of tiny chunks costs S3, and s3cond, a
	// header, a signature and a hash each.
	minChunkSize = 8192
	// maxOvershootDiscard bounds the size of a chunk that runs past
	// x-amz-decoded-content-length and is read (not passed on) to tell a
	// broken body from a mismatched length, as S3 does; a larger chunk is
	// answered as a length mismatch at once.
	maxOvershootDiscard = 16 << 20
	// chunkSignatureLength is the hex length of a chunk signature (SHA-256).
	chunkSignatureLength = 64

	trailerSignatureName = "x-amz-trailer-signature"
	chunkSignatureName   = "chunk-signature"
)

// trailerField is one trailing header, name lower-cased, value trimmed.
type trailerField struct{ name, value string }

// chunkedDecoder decodes an aws-chunked body (SigV4 streaming upload) and
// verifies its chunk and trailer signatures as it goes. Read returns the
// decoded data and io.EOF only once the whole framing, every signature and the
// decoded length have been checked; any failure is a sticky *s3err.Error.
type chunkedDecoder struct {
	raw           *countingReader
	src           *bufio.Reader
	chain         *signatureChain // nil when chunks are unsigned
	allowTrailers bool            // the payload mode has a trailer section
	decodedLength int64           // x-amz-decoded-content-length
	encodedLength int64           // Content-Length of the encoded body, -1 unknown

	decoded        int64
	chunks         int   // data chunks begun so far
	lastChunkSize  int64 // size of the latest data chunk
	inChunk        bool  // data of a non-final chunk is being read
	chunkLeft      int64
	chunkSignature string
	chunkHash      hash.Hash
	trailers       []trailerField
	err            error
}

func newChunkedDecoder(raw io.Reader, chain *signatureChain, allowTrailers bool, decodedLength, encodedLength int64) *chunkedDecoder {
	counter := &countingReader{r: raw}
	d := &chunkedDecoder{
		raw:           counter,
		src:           bufio.NewReaderSize(counter, chunkedBufferSize),
		chain:         chain,
		allowTrailers: allowTrailers,
		decodedLength: decodedLength,
		encodedLength: encodedLength,
	}
	if chain != nil {
		d.chunkHash = sha256.New()
	}
	return d
}

// Trailers returns the trailing fields; complete only after Read returned io.EOF.
func (d *chunkedDecoder) Trailers() []trailerField { return d.trailers }

func (d *chunkedDecoder) Read(p []byte) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	for d.chunkLeft == 0 {
		if err := d.advance(); err != nil {
			d.err = err
			return 0, err
		}
	}
	if len(p) == 0 {
		return 0, nil
	}
	if int64(len(p)) > d.chunkLeft {
		p = p[:d.chunkLeft]
	}
	n, err := d.src.Read(p)
	if n > 0 {
		d.chunkLeft -= int64(n)
		d.decoded += int64(n)
		if d.chunkHash != nil {
			d.chunkHash.Write(p[:n])
		}
	}
	if err != nil {
		d.err = truncatedError(err)
		return n, d.err
	}
	return n, nil
}

// advance finishes the chunk whose data was read and starts the next one. It
// returns io.EOF once the final chunk and the trailer section verified.
func (d *chunkedDecoder) advance() error {
	if d.inChunk {
		if err := d.endChunk(); err != nil {
			return err
		}
	}
	size, signature, err := d.readChunkHeader()
	if err != nil {
		return err
	}
	if size > 0 && d.chunks > 0 && d.lastChunkSize < minChunkSize {
		// Only now is the small chunk known not to be the last one.
		return invalidChunkSize(d.chunks+1, d.lastChunkSize)
	}
	if size > d.decodedLength-d.decoded {
		return d.overshoot(size)
	}
	if size == 0 {
		return d.endStream(signature)
	}
	d.chunks++
	d.lastChunkSize = size
	d.inChunk = true
	d.chunkLeft = size
	d.chunkSignature = signature
	return nil
}

// overshoot answers a chunk that runs past x-amz-decoded-content-length.
// S3 reads the chunk first: broken framing in it is a body that broke off,
// a well-formed one a length mismatch. Its bytes are discarded, never
// passed on.
func (d *chunkedDecoder) overshoot(size int64) error {
	mismatch := s3err.ContentLengthMismatch(d.decodedLength, d.decoded+size)
	if size > maxOvershootDiscard {
		return mismatch
	}
	if _, err := io.CopyN(io.Discard, d.src, size); err != nil {
		return truncatedError(err)
	}
	var crlf [2]byte
	if _, err := io.ReadFull(d.src, crlf[:]); err != nil {
		return truncatedError(err)
	}
	if crlf != [2]byte{'\r', '\n'} {
		return incompleteBody("aws-chunked chunk data is not followed by CRLF")
	}
	return mismatch
}

// endChunk consumes the CRLF after a chunk's data and verifies its signature.
func (d *chunkedDecoder) endChunk() error {
	var crlf [2]byte
	if _, err := io.ReadFull(d.src, crlf[:]); err != nil {
		return truncatedError(err)
	}
	if crlf != [2]byte{'\r', '\n'} {
		return incompleteBody("aws-chunked chunk data is not followed by CRLF")
	}
	d.inChunk = false
	if d.chain == nil {
		return nil
	}
	err := d.chain.verifyChunk(d.chunkSignature, hex.EncodeToString(d.chunkHash.Sum(nil)))
	d.chunkHash.Reset()
	return err
}

// endStream verifies the final (empty) chunk, the decoded length and the
// trailer section, and that nothing follows it.
func (d *chunkedDecoder) endStream(finalSignature string) error {
	if d.chain != nil {
		if err := d.chain.verifyChunk(finalSignature, EmptyPayloadHash); err != nil {
			return err
		}
	}
	if d.decoded != d.decodedLength {
		return s3err.ContentLengthMismatch(d.decodedLength, d.decoded)
	}
	if err := d.readTrailerSection(); err != nil {
		return err
	}
	var extra [1]byte
	n, err := d.src.Read(extra[:])
	if n > 0 {
		return incompleteBody("bytes follow the end of the aws-chunked body")
	}
	if err != io.EOF {
		return truncatedError(err)
	}
	if d.encodedLength >= 0 && d.raw.n != d.encodedLength {
		return s3err.ContentLengthMismatch(d.encodedLength, d.raw.n)
	}
	return io.EOF
}

// readChunkHeader parses "hex-size[;ext[=value]]...\r\n" and returns the size
// and the chunk-signature extension (empty when absent).
func (d *chunkedDecoder) readChunkHeader() (int64, string, error) {
	line, err := d.readLine()
	if err == io.EOF {
		return 0, "", incompleteBody("aws-chunked body ended before its final chunk")
	}
	if err != nil {
		return 0, "", err
	}
	sizeField, extensions, _ := bytes.Cut(line, []byte{';'})
	size, ok := parseChunkSize(bytes.TrimSpace(sizeField))
	if !ok {
		// S3 answers an unreadable chunk size as a body it could not read completely.
		return 0, "", incompleteBody("aws-chunked chunk size is not a hex number")
	}
	signature, found := "", false
	for len(extensions) > 0 {
		var extension []byte
		extension, extensions, _ = bytes.Cut(extensions, []byte{';'})
		name, value, _ := bytes.Cut(extension, []byte{'='})
		if !bytes.Equal(bytes.TrimSpace(name), []byte(chunkSignatureName)) {
			continue // other chunk extensions carry nothing S3 acts on
		}
		if found {
			return 0, "", incompleteBody("aws-chunked chunk header repeats chunk-signature")
		}
		signature, found = string(bytes.TrimSpace(value)), true
	}
	if d.chain != nil && (!found || !isChunkSignature(signature)) {
		// S3 reads a missing or misshapen signature as broken framing;
		// only a well-formed one that does not verify is SignatureDoesNotMatch.
		return 0, "", incompleteBody("aws-chunked chunk header lacks a 64-digit chunk-signature")
	}
	return size, signature, nil
}

// parseChunkSize accepts 1 to 16 hex digits whose value fits an int64.
func parseChunkSize(field []byte) (int64, bool) {
	if len(field) == 0 || len(field) > maxChunkSizeDigits {
		return 0, false
	}
	for _, c := range field {
		if !isHexDigit(c) {
			return 0, false
		}
	}
	size, err := strconv.ParseInt(string(field), 16, 64)
	return size, err == nil
}

// isChunkSignature reports whether s has the shape of a chunk signature:
// 64 hex digits.
func isChunkSignature(s string) bool {
	if len(s) != chunkSignatureLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isHexDigit(s[i]) {
			return false
		}
	}
	return true
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// readTrailerSection reads the lines after the final chunk up to the blank
// line that closes the body. A body that ends before that line broke off:
// S3 answers IncompleteBody for it, trailer or not (versitygw's suite, run
// against S3 too, sends "0\r\n" and "0\r\n<trailer>\r\n" and expects so).
func (d *chunkedDecoder) readTrailerSection() error {
	var claimedSignature string
	sawSignature := false
	for lines := 0; ; lines++ {
		line, err := d.readTrailerLine()
		if err == io.EOF {
			return incompleteBody("aws-chunked body ends without its final CRLF")
		}
		if err != nil {
			return err
		}
		if len(line) == 0 {
			break
		}
		if lines >= maxTrailerLines || sawSignature || !d.allowTrailers {
			return malformedTrailer("unexpected trailer line")
		}
		name, value, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			return malformedTrailer("trailer line has no colon")
		}
		field := trailerField{
			name:  strings.ToLower(string(bytes.TrimSpace(name))),
			value: string(bytes.TrimSpace(value)),
		}
		if field.name == trailerSignatureName {
			if d.chain == nil {
				return malformedTrailer("unsigned trailer carries a trailer signature")
			}
			if !isChunkSignature(field.value) {
				return incompleteBody("aws-chunked trailer signature is not 64 hex digits")
			}
			claimedSignature, sawSignature = field.value, true
			continue
		}
		if d.chain != nil && len(d.trailers) > 0 {
			// A signed trailer is its checksum line, then the signature:
			// S3 reads another line where the signature belongs as a
			// broken body (versitygw's SignedStreamingPayloadTrailer_incomplete_body).
			return incompleteBody("signed aws-chunked trailer has a second line where its signature belongs")
		}
		d.trailers = append(d.trailers, field)
	}
	if d.chain != nil && d.allowTrailers {
		if !sawSignature && len(d.trailers) == 0 {
			// Nothing at all where the trailer belongs: S3 calls the
			// trailing data malformed before it looks for a signature.
			return malformedTrailer("aws-chunked trailer section is empty")
		}
		if !sawSignature {
			return signatureMismatch("aws-chunked trailer lacks x-amz-trailer-signature")
		}
		if err := d.chain.verifyTrailer(claimedSignature, canonicalTrailer(d.trailers)); err != nil {
			return err
		}
	}
	return nil
}

// canonicalTrailer is the byte string the trailer signature covers.
func canonicalTrailer(fields []trailerField) []byte {
	var b bytes.Buffer
	for _, f := range fields {
		b.WriteString(f.name)
		b.WriteByte(':')
		b.WriteString(f.value)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// readTrailerLine reads a trailer line. Besides "name:value\r\n" it accepts
// "name:value\n\r\n", which minio-go v7 sends (it writes the signed form of
// the line, ending in "\n", then CRLF); the line's content is the same.
func (d *chunkedDecoder) readTrailerLine() ([]byte, error) {
	line, err := d.src.ReadSlice('\n')
	if err != nil || len(line) < 2 || line[len(line)-2] == '\r' {
		return finishLine(line, err)
	}
	line = bytes.Clone(line[:len(line)-1]) // Peek below may move the buffer under line
	if next, err := d.src.Peek(2); err != nil || next[0] != '\r' || next[1] != '\n' {
		return nil, incompleteBody("aws-chunked trailer line does not end in CRLF")
	}
	if _, err := d.src.Discard(2); err != nil {
		return nil, truncatedError(err)
	}
	if len(line) > maxChunkLineLength {
		return nil, incompleteBody("aws-chunked trailer line too long")
	}
	return withoutBareCR(line)
}

// readLine returns the next CRLF-terminated line without its CRLF, valid
// until the next read. It returns io.EOF only when the stream ended cleanly
// at a line boundary.
func (d *chunkedDecoder) readLine() ([]byte, error) {
	return finishLine(d.src.ReadSlice('\n'))
}

// finishLine checks what ReadSlice('\n') returned and strips the CRLF.
func finishLine(line []byte, err error) ([]byte, error) {
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return nil, incompleteBody("aws-chunked header or trailer line too long")
	case err == io.EOF && len(line) == 0:
		return nil, io.EOF
	case err != nil:
		return nil, truncatedError(err)
	}
	if len(line) > maxChunkLineLength+2 {
		return nil, incompleteBody("aws-chunked header or trailer line too long")
	}
	if len(line) < 2 || line[len(line)-2] != '\r' {
		return nil, incompleteBody("aws-chunked line does not end in CRLF")
	}
	return withoutBareCR(line[:len(line)-2])
}

// withoutBareCR refuses a line with a CR inside it: a line break that lost
// its LF is broken framing, which S3 answers IncompleteBody, not a byte of
// a value (versitygw's SignedStreamingPayloadTrailer_incomplete_body).
func withoutBareCR(line []byte) ([]byte, error) {
	if bytes.IndexByte(line, '\r') >= 0 {
		return nil, incompleteBody("aws-chunked line holds a CR without LF")
	}
	return line, nil
}

// countingReader counts the bytes read from the client.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// incompleteBody is S3's answer to an aws-chunked body it cannot read to a
// well-formed end (truncation, broken framing, wrong decoded length).
func incompleteBody(reason string) *s3err.Error {
	return s3err.Wrap(s3err.IncompleteBody, errors.New(reason))
}

// truncatedError turns a failed read of the client body into IncompleteBody,
// keeping the cause (client disconnect, short body) for logs.
func truncatedError(err error) *s3err.Error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	var s3e *s3err.Error
	if errors.As(err, &s3e) {
		return s3e
	}
	return s3err.Wrap(s3err.IncompleteBody, err)
}

// invalidChunkSize is S3's answer to a chunk under minChunkSize that was not
// the last data chunk: Chunk numbers the chunk whose header showed it (the
// one after), BadChunkSize is the small chunk's size, as S3 reports them
// (a 3-byte chunk followed by another: Chunk 2, BadChunkSize 3).
func invalidChunkSize(chunk int, badSize int64) *s3err.Error {
	return s3err.New(s3err.InvalidChunkSizeError).
		With("Chunk", strconv.Itoa(chunk)).
		With("BadChunkSize", strconv.FormatInt(badSize, 10))
}

func signatureMismatch(reason string) *s3err.Error {
	return s3err.Wrap(s3err.SignatureDoesNotMatch, errors.New(reason))
}

// malformedTrailer is S3's 400 MalformedTrailerError: trailing headers that
// are not well-formed, or not the ones x-amz-trailer declared.
func malformedTrailer(reason string) *s3err.Error {
	return s3err.Wrap(s3err.MalformedTrailerError, errors.New(reason))
}

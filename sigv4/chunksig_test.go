package sigv4

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/s3cond/s3cond/internal/testkit"
	"github.com/s3cond/s3cond/s3err"
)

// The AWS "Example: PUT Object" streaming upload
// (testdata/streaming-example.txt).
const (
	exampleSecret        = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	exampleScope         = "20130524/us-east-1/s3/aws4_request"
	exampleSigningKeyHex = "dbb893acc010964918f1fd433add87c70e8b0db6be30c1fbeafefa5ec6ba8378"
	exampleSeedSignature = "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"
	exampleChunk1Sig     = "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648"
	exampleChunk2Sig     = "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497"
	exampleFinalSig      = "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9"
	// s_expected_trailing_headers_signature in aws-c-auth's test_chunked_signing.c:
	// trailers first:1st, second:2nd, third:3rd chained after exampleFinalSig.
	exampleTrailerSig = "df5735bd9f3295cd9386572292562fefc93ba94e80a0a1ddcbd652c4e0a75e6c"
)

var exampleTime = time.Date(2013, 5, 24, 0, 0, 0, 0, time.UTC)

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func exampleSigning(t testing.TB) *ChunkSigning {
	t.Helper()
	key, err := hex.DecodeString(exampleSigningKeyHex)
	if err != nil {
		t.Fatal(err)
	}
	return &ChunkSigning{SigningKey: key, Time: exampleTime, Scope: exampleScope, SeedSignature: exampleSeedSignature}
}

// newTestChunkSigner is the SDK side of a streaming upload signed with s:
// testkit's own copy of the documented formulas, so the decoder is checked
// against an implementation it does not share code with.
func newTestChunkSigner(s *ChunkSigning) *testkit.ChunkSigner {
	return testkit.NewChunkSigner(s.SigningKey, s.Time, s.Scope, s.SeedSignature)
}

// streamOptions says how encodeStream frames a payload.
type streamOptions struct {
	chunkSize int
	signer    *testkit.ChunkSigner // nil: unsigned chunks
	trailers  []string             // "name:value" lines after the final chunk
	// signTrailer adds x-amz-trailer-signature (signed trailer mode).
	signTrailer bool
}

// encodeStream frames payload as aws-chunked the way AWS SDKs do.
func encodeStream(payload []byte, o streamOptions) []byte {
	var out bytes.Buffer
	writeChunk := func(data []byte) {
		out.WriteString(strconv.FormatInt(int64(len(data)), 16))
		if o.signer != nil {
			out.WriteString(";chunk-signature=" + o.signer.SignChunk(data))
		}
		out.WriteString("\r\n")
		if len(data) > 0 {
			out.Write(data)
			out.WriteString("\r\n")
		}
	}
	for rest := payload; len(rest) > 0; {
		n := min(o.chunkSize, len(rest))
		writeChunk(rest[:n])
		rest = rest[n:]
	}
	writeChunk(nil)
	var signed strings.Builder
	for _, line := range o.trailers {
		out.WriteString(line + "\r\n")
		signed.WriteString(line + "\n")
	}
	if o.signTrailer {
		out.WriteString("x-amz-trailer-signature:" + o.signer.SignTrailer(signed.String()) + "\r\n")
	}
	out.WriteString("\r\n")
	return out.Bytes()
}

// streamingHeader is the header an SDK sends with an aws-chunked body.
func streamingHeader(decodedLength int, trailer string) http.Header {
	h := http.Header{}
	h.Set("Content-Encoding", "aws-chunked")
	h.Set("X-Amz-Decoded-Content-Length", strconv.Itoa(decodedLength))
	if trailer != "" {
		h.Set("X-Amz-Trailer", trailer)
	}
	return h
}

// readBody reads b to its end the way the proxy does, and returns what it
// read and the error that ended it (nil for a clean io.EOF).
func readBody(t testing.TB, b *Body, bufSize int) ([]byte, error) {
	t.Helper()
	var out bytes.Buffer
	buf := make([]byte, bufSize)
	for {
		n, err := b.Read(buf)
		out.Write(buf[:n])
		if err == io.EOF {
			return out.Bytes(), nil
		}
		if err != nil {
			return out.Bytes(), err
		}
	}
}

func requireCode(t testing.TB, err error, code s3err.Code) *s3err.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("got success, want %s", code)
	}
	var e *s3err.Error
	if !s3errAs(err, &e) || e.Code != code {
		t.Fatalf("got error %v, want %s", err, code)
	}
	return e
}

func s3errAs(err error, target **s3err.Error) bool {
	e, ok := err.(*s3err.Error)
	if ok {
		*target = e
	}
	return ok
}

func TestExampleSigningKeyDerivation(t *testing.T) {
	key := testkit.SigningKey(exampleSecret, exampleTime, "us-east-1")
	if got := hex.EncodeToString(key); got != exampleSigningKeyHex {
		t.Fatalf("signing key %s, want %s", got, exampleSigningKeyHex)
	}
}

// TestAWSStreamingExample reproduces the AWS documentation example byte for
// byte and decodes it.
func TestAWSStreamingExample(t *testing.T) {
	payload := bytes.Repeat([]byte{'a'}, 66560)
	encoded := fmt.Sprintf("10000;chunk-signature=%s\r\n%s\r\n400;chunk-signature=%s\r\n%s\r\n0;chunk-signature=%s\r\n\r\n",
		exampleChunk1Sig, payload[:65536], exampleChunk2Sig, payload[:1024], exampleFinalSig)
	if len(encoded) != 66824 {
		t.Fatalf("encoded example is %d bytes, want 66824", len(encoded))
	}
	// The independent test encoder must produce the documented bytes too.
	if got := encodeStream(payload, streamOptions{chunkSize: 65536, signer: newTestChunkSigner(exampleSigning(t))}); string(got) != encoded {
		t.Fatal("test encoder does not reproduce the AWS example")
	}

	body, err := NewBody(strings.NewReader(encoded), BodySpec{
		Mode:          PayloadStreamingSigned,
		ContentLength: 66824,
		Header:        streamingHeader(66560, ""),
		Chunk:         exampleSigning(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	if body.Length() != 66560 {
		t.Fatalf("Length() = %d, want 66560", body.Length())
	}
	got, err := readBody(t, body, 4096)
	if err != nil {
		t.Fatalf("example did not verify: %v", err)
	}
	if !bytes.Equal(got, payload) {
		t.Fatalf("decoded %d bytes, want the 66560-byte payload", len(got))
	}
}

// TestExampleChunkSignatures checks each chunk signature of the AWS example
// through the production chain, in order.
func TestExampleChunkSignatures(t *testing.T) {
	chain := newSignatureChain(exampleSigning(t))
	a := bytes.Repeat([]byte{'a'}, 65536)
	steps := []struct {
		signature string
		data      []byte
	}{
		{exampleChunk1Sig, a},
		{exampleChunk2Sig, a[:1024]},
		{exampleFinalSig, nil},
	}
	for i, step := range steps {
		sum := sha256.Sum256(step.data)
		if err := chain.verifyChunk(step.signature, hex.EncodeToString(sum[:])); err != nil {
			t.Fatalf("chunk %d: %v", i+1, err)
		}
	}
	if err := chain.verifyTrailer(exampleTrailerSig, []byte("first:1st\nsecond:2nd\nthird:3rd\n")); err != nil {
		t.Fatalf("aws-c-auth trailing headers signature: %v", err)
	}
}

func TestChunkSignatureChainRejectsReorderAndGarbage(t *testing.T) {
	a := bytes.Repeat([]byte{'a'}, 1024)
	sum := sha256.Sum256(a)
	// The second chunk's signature is only valid after the first.
	chain := newSignatureChain(exampleSigning(t))
	requireCode(t, chain.verifyChunk(exampleChunk2Sig, hex.EncodeToString(sum[:])), s3err.SignatureDoesNotMatch)
	for _, claimed := range []string{"", "zz", strings.ToUpper(exampleChunk1Sig) + "00", exampleChunk1Sig[:62]} {
		chain := newSignatureChain(exampleSigning(t))
		full := sha256.Sum256(bytes.Repeat([]byte{'a'}, 65536))
		requireCode(t, chain.verifyChunk(claimed, hex.EncodeToString(full[:])), s3err.SignatureDoesNotMatch)
	}
}

func signedTrailerBody(t *testing.T, payload []byte) []byte {
	t.Helper()
	return encodeStream(payload, streamOptions{
		chunkSize:   8192,
		signer:      newTestChunkSigner(exampleSigning(t)),
		trailers:    []string{"x-amz-checksum-crc32:" + crc32Base64(payload)},
		signTrailer: true,
	})
}

func TestSignedTrailerStreamVerifies(t *testing.T) {
	payload := bytes.Repeat([]byte("0123456789"), 3000)
	encoded := signedTrailerBody(t, payload)
	body := newSignedTrailerBody(t, encoded, len(payload))
	if name := body.TrailerChecksumName(); name != "x-amz-checksum-crc32" {
		t.Fatalf("TrailerChecksumName() = %q", name)
	}
	if _, _, ok := body.Checksum(); ok {
		t.Fatal("trailing checksum reported before the body was read")
	}
	got, err := readBody(t, body, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, payload) {
		t.Fatal("decoded payload differs")
	}
	name, value, ok := body.Checksum()
	if !ok || name != "x-amz-checksum-crc32" || value != crc32Base64(payload) {
		t.Fatalf("Checksum() = %q %q %v", name, value, ok)
	}
}

func newSignedTrailerBody(t *testing.T, encoded []byte, decodedLength int) *Body {
	t.Helper()
	body, err := NewBody(bytes.NewReader(encoded), BodySpec{
		Mode:          PayloadStreamingSignedTrailer,
		ContentLength: int64(len(encoded)),
		Header:        streamingHeader(decodedLength, "x-amz-checksum-crc32"),
		Chunk:         exampleSigning(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// TestTamperedSignedStreams flips one byte in each protected part; every
// body must end in the S3 error instead of io.EOF.
func TestTamperedSignedStreams(t *testing.T) {
	payload := bytes.Repeat([]byte("abcdefgh"), 4096) // 4 chunks of 8 KiB
	encoded := signedTrailerBody(t, payload)
	firstSig := bytes.Index(encoded, []byte("chunk-signature=")) + len("chunk-signature=")
	trailerValue := bytes.Index(encoded, []byte("x-amz-checksum-crc32:")) + len("x-amz-checksum-crc32:")
	trailerSig := bytes.Index(encoded, []byte("x-amz-trailer-signature:")) + len("x-amz-trailer-signature:")
	dataByte := bytes.Index(encoded, []byte("\r\n")) + 2 + 100

	cases := []struct {
		name   string
		offset int
		want   s3err.Code
	}{
		{"chunk data", dataByte, s3err.SignatureDoesNotMatch},
		{"chunk signature", firstSig + 5, s3err.SignatureDoesNotMatch},
		// The trailer signature covers the checksum line, so changing the
		// checksum breaks the signature before the checksum is compared.
		{"trailer checksum", trailerValue + 1, s3err.SignatureDoesNotMatch},
		{"trailer signature", trailerSig + 10, s3err.SignatureDoesNotMatch},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tampered := bytes.Clone(encoded)
			tampered[tc.offset] = flipHexOrByte(tampered[tc.offset])
			_, err := readBody(t, newSignedTrailerBody(t, tampered, len(payload)), 4096)
			requireCode(t, err, tc.want)
		})
	}
}

// flipHexOrByte changes a byte while keeping hex digits hex and base64
// characters base64, so the tamper is caught by the cryptography rather
// than by syntax checks.
func flipHexOrByte(c byte) byte {
	switch {
	case c == '0':
		return '1'
	case isHexDigit(c):
		return '0'
	default:
		return c ^ 0x01
	}
}

func TestUnsignedTrailerChecksumTamperIsBadDigest(t *testing.T) {
	payload := []byte("hello world")
	encoded := encodeStream(payload, streamOptions{chunkSize: minChunkSize, trailers: []string{"x-amz-checksum-crc32:" + crc32Base64([]byte("hello worle"))}})
	body, err := NewBody(bytes.NewReader(encoded), BodySpec{
		Mode: PayloadStreamingUnsignedTrailer, ContentLength: int64(len(encoded)),
		Header: streamingHeader(len(payload), "x-amz-checksum-crc32"),
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := readBody(t, body, 64)
	e := requireCode(t, err, s3err.BadDigest)
	if e.Message != "The CRC32 you specified did not match the calculated checksum." {
		t.Fatalf("message %q", e.Message)
	}
	if !bytes.Equal(got, payload) {
		t.Fatalf("data before the error = %q", got)
	}
	if _, _, ok := body.Checksum(); ok {
		t.Fatal("Checksum() reported a checksum that failed")
	}
}

package sigv4

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/signer"

	"github.com/s3cond/s3cond/internal/testkit"
	"github.com/s3cond/s3cond/s3err"
)

// S3's two wordings of IncompleteBody: a body whose framing broke off, and
// one whose length is not the declared one.
const (
	bodyBrokeOff   = "The request body terminated unexpectedly"
	lengthMismatch = "You did not provide the number of bytes specified by the Content-Length HTTP header"
)

func unsignedTrailerBody(t testing.TB, encoded string, decodedLength int, trailer string) (*Body, error) {
	t.Helper()
	return NewBody(strings.NewReader(encoded), BodySpec{
		Mode:          PayloadStreamingUnsignedTrailer,
		ContentLength: int64(len(encoded)),
		Header:        streamingHeader(decodedLength, trailer),
	})
}

func TestChunkedDecoderEdgeCases(t *testing.T) {
	helloCRC := "x-amz-checksum-crc32:" + crc32Base64([]byte("hello"))
	cases := []struct {
		name          string
		encoded       string
		decodedLength int
		trailer       string
		want          s3err.Code // "" for success
		message       string     // checked when set
	}{
		{name: "empty body", encoded: "0\r\n\r\n", decodedLength: 0},
		{name: "empty body with trailer", encoded: "0\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n", trailer: "x-amz-checksum-crc32"},
		{name: "one chunk", encoded: "5\r\nhello\r\n0\r\n" + helloCRC + "\r\n\r\n", decodedLength: 5, trailer: "x-amz-checksum-crc32"},
		{name: "upper-case hex and zero padding", encoded: "0000A\r\nhellohello\r\n0\r\n\r\n", decodedLength: 10},
		{name: "chunk extensions", encoded: "5;name=value;flag\r\nhello\r\n0;x=y\r\n\r\n", decodedLength: 5},
		{name: "space around size and trailer", encoded: "5 ;a=b\r\nhello\r\n0\r\n x-amz-checksum-crc32 : " + crc32Base64([]byte("hello")) + " \r\n\r\n", decodedLength: 5, trailer: "x-amz-checksum-crc32"},
		{name: "missing final CRLF after trailer", encoded: "5\r\nhello\r\n0\r\n" + helloCRC + "\r\n", decodedLength: 5, trailer: "x-amz-checksum-crc32", want: s3err.IncompleteBody, message: bodyBrokeOff},
		{name: "missing final CRLF without trailer", encoded: "5\r\nhello\r\n0\r\n", decodedLength: 5, want: s3err.IncompleteBody, message: bodyBrokeOff},
		{name: "declared trailer and final CRLF missing", encoded: "A\r\ndummy data\r\n0\r\n", decodedLength: 10, trailer: "x-amz-checksum-crc64nvme", want: s3err.IncompleteBody, message: bodyBrokeOff},
		{name: "trailer line ending LF CRLF (minio-go)", encoded: "5\r\nhello\r\n0\r\n" + helloCRC + "\n\r\n\r\n", decodedLength: 5, trailer: "x-amz-checksum-crc32"},
		{name: "trailer line ending bare LF", encoded: "5\r\nhello\r\n0\r\n" + helloCRC + "\nX\r\n\r\n", decodedLength: 5, trailer: "x-amz-checksum-crc32", want: s3err.IncompleteBody},
		{name: "oversized chunk header", encoded: "5;" + strings.Repeat("a", maxChunkLineLength) + "\r\nhello\r\n0\r\n\r\n", decodedLength: 5, want: s3err.IncompleteBody},
		{name: "oversized chunk header beyond buffer", encoded: "5;" + strings.Repeat("a", 3*chunkedBufferSize) + "\r\nhello\r\n0\r\n\r\n", decodedLength: 5, want: s3err.IncompleteBody},
		{name: "negative size", encoded: "-5\r\nhello\r\n0\r\n\r\n", decodedLength: 5, want: s3err.IncompleteBody},
		{name: "huge size", encoded: "7fffffffffffffff\r\nhello\r\n0\r\n\r\n", decodedLength: 5, want: s3err.IncompleteBody},
		{name: "overflowing size", encoded: "ffffffffffffffff\r\nhello\r\n0\r\n\r\n", decodedLength: 5, want: s3err.IncompleteBody},
		{name: "seventeen digits", encoded: "00000000000000005\r\nhello\r\n0\r\n\r\n", decodedLength: 5, want: s3err.IncompleteBody},
		{name: "non-hex size", encoded: "5g\r\nhello\r\n0\r\n\r\n", decodedLength: 5, want: s3err.IncompleteBody},
		{name: "0x prefix", encoded: "0x5\r\nhello\r\n0\r\n\r\n", decodedLength: 5, want: s3err.IncompleteBody},
		{name: "plus sign", encoded: "+5\r\nhello\r\n0\r\n\r\n", decodedLength: 5, want: s3err.IncompleteBody},
		{name: "empty size", encoded: "\r\nhello\r\n0\r\n\r\n", decodedLength: 5, want: s3err.IncompleteBody},
		{name: "bare LF", encoded: "5\nhello\r\n0\r\n\r\n", decodedLength: 5, want: s3err.IncompleteBody},
		{name: "data not followed by CRLF", encoded: "5\r\nhelloX\r\n0\r\n\r\n", decodedLength: 5, want: s3err.IncompleteBody, message: bodyBrokeOff},
		{name: "truncated in data", encoded: "5\r\nhel", decodedLength: 5, want: s3err.IncompleteBody},
		{name: "truncated in header", encoded: "5\r\nhello\r\n0", decodedLength: 5, want: s3err.IncompleteBody},
		{name: "truncated before final chunk", encoded: "5\r\nhello\r\n", decodedLength: 5, want: s3err.IncompleteBody},
		{name: "truncated in trailer", encoded: "5\r\nhello\r\n0\r\nx-amz-checksum-crc32:AA", decodedLength: 5, trailer: "x-amz-checksum-crc32", want: s3err.IncompleteBody},
		{name: "extra bytes after end", encoded: "5\r\nhello\r\n0\r\n\r\nmore", decodedLength: 5, want: s3err.IncompleteBody},
		{name: "decoded length larger than data", encoded: "5\r\nhello\r\n0\r\n\r\n", decodedLength: 6, want: s3err.IncompleteBody, message: lengthMismatch},
		{name: "decoded length smaller than data", encoded: "5\r\nhello\r\n0\r\n\r\n", decodedLength: 4, want: s3err.IncompleteBody, message: lengthMismatch},
		{name: "chunk past decoded length, well framed", encoded: "b\r\nabcdefghijk\r\n0\r\n\r\n", decodedLength: 5, want: s3err.IncompleteBody, message: lengthMismatch},
		{name: "chunk past decoded length, broken framing", encoded: "B\r\ndummy data\r\n0\r\n\r\n", decodedLength: 10, want: s3err.IncompleteBody, message: bodyBrokeOff},
		{name: "chunk far past decoded length", encoded: "7fffffff\r\nabc", decodedLength: 3, want: s3err.IncompleteBody, message: lengthMismatch},
		{name: "declared trailer missing", encoded: "5\r\nhello\r\n0\r\n\r\n", decodedLength: 5, trailer: "x-amz-checksum-crc32", want: s3err.MalformedTrailerError},
		{name: "undeclared trailer", encoded: "5\r\nhello\r\n0\r\nx-amz-meta-a:b\r\n\r\n", decodedLength: 5, want: s3err.MalformedTrailerError},
		{name: "other trailer than declared", encoded: "5\r\nhello\r\n0\r\nx-amz-checksum-sha1:" + hexToBase64(t, "aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d") + "\r\n\r\n", decodedLength: 5, trailer: "x-amz-checksum-crc32", want: s3err.MalformedTrailerError},
		{name: "repeated trailer", encoded: "5\r\nhello\r\n0\r\n" + helloCRC + "\r\n" + helloCRC + "\r\n\r\n", decodedLength: 5, trailer: "x-amz-checksum-crc32", want: s3err.MalformedTrailerError},
		{name: "trailer without colon", encoded: "5\r\nhello\r\n0\r\nx-amz-checksum-crc32\r\n\r\n", decodedLength: 5, trailer: "x-amz-checksum-crc32", want: s3err.MalformedTrailerError},
		{name: "malformed trailer value", encoded: "5\r\nhello\r\n0\r\nx-amz-checksum-crc32:AAAA\r\n\r\n", decodedLength: 5, trailer: "x-amz-checksum-crc32", want: s3err.InvalidRequest,
			message: "Value for x-amz-checksum-crc32 trailing header is invalid."},
		{name: "trailer signature on unsigned body", encoded: "5\r\nhello\r\n0\r\n" + helloCRC + "\r\nx-amz-trailer-signature:" + strings.Repeat("0", 64) + "\r\n\r\n", decodedLength: 5, trailer: "x-amz-checksum-crc32", want: s3err.MalformedTrailerError},
		{name: "too many trailer lines", encoded: "0\r\n" + strings.Repeat("a:b\r\n", maxTrailerLines+1) + "\r\n", want: s3err.MalformedTrailerError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body, err := unsignedTrailerBody(t, tc.encoded, tc.decodedLength, tc.trailer)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readBody(t, body, 3)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				if len(got) != tc.decodedLength {
					t.Fatalf("decoded %d bytes, want %d", len(got), tc.decodedLength)
				}
				return
			}
			e := requireCode(t, err, tc.want)
			if tc.message != "" && e.Message != tc.message {
				t.Fatalf("message %q, want %q", e.Message, tc.message)
			}
			// The error is sticky: the proxy may read again and must not see io.EOF.
			if _, again := body.Read(make([]byte, 8)); again != err {
				t.Fatalf("second Read returned %v, want the same error", again)
			}
		})
	}
}

func TestEmptyStreamEndsOnFirstRead(t *testing.T) {
	body, err := unsignedTrailerBody(t, "0\r\n\r\n", 0, "")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := body.Read(make([]byte, 16)); n != 0 || err != io.EOF {
		t.Fatalf("first Read = %d, %v; want 0, io.EOF", n, err)
	}
}

func TestSignedStreamFramingProblems(t *testing.T) {
	signing := exampleSigning(t)
	payload := bytes.Repeat([]byte("hello world, signed "), minChunkSize/8) // two full chunks and a short one
	good := encodeStream(payload, streamOptions{chunkSize: minChunkSize, signer: newTestChunkSigner(signing)})
	withExtension := bytes.Replace(good, []byte(";chunk-signature="), []byte(";x-ext=1;chunk-signature="), 1)
	noSignature := []byte(strconv.FormatInt(int64(len(payload)), 16) + "\r\n" + string(payload) + "\r\n0\r\n\r\n")
	repeated := bytes.Replace(good, []byte(";chunk-signature="), []byte(";chunk-signature=00;chunk-signature="), 1)
	signatureStart := bytes.Index(good, []byte(";chunk-signature=")) + len(";chunk-signature=")
	shortSignature := append(bytes.Clone(good[:signatureStart+10]), good[signatureStart+15:]...)
	wrongSignature := bytes.Clone(good)
	wrongSignature[signatureStart] = flipHexOrByte(wrongSignature[signatureStart])
	trailerInPlainMode := append(bytes.Clone(bytes.TrimSuffix(good, []byte("\r\n"))), []byte("x-amz-checksum-crc32:AAAAAA==\r\n\r\n")...)
	missingFinalCRLF := bytes.TrimSuffix(good, []byte("\r\n"))
	cases := []struct {
		name    string
		encoded []byte
		want    s3err.Code
	}{
		{"valid", good, ""},
		{"extension before signature", withExtension, ""},
		{"missing final CRLF", missingFinalCRLF, s3err.IncompleteBody},
		// S3 reads a missing or misshapen chunk signature as broken framing
		// (versitygw's SignedStreamingPayload_invalid_encoding, run against S3).
		{"no chunk signature", noSignature, s3err.IncompleteBody},
		{"repeated chunk signature", repeated, s3err.IncompleteBody},
		{"short chunk signature", shortSignature, s3err.IncompleteBody},
		{"wrong chunk signature", wrongSignature, s3err.SignatureDoesNotMatch},
		{"trailer in non-trailer mode", trailerInPlainMode, s3err.MalformedTrailerError},
		{"extra bytes", append(bytes.Clone(good), 'x'), s3err.IncompleteBody},
		{"truncated", good[:len(good)-30], s3err.IncompleteBody},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body, err := NewBody(bytes.NewReader(tc.encoded), BodySpec{
				Mode: PayloadStreamingSigned, ContentLength: int64(len(tc.encoded)),
				Header: streamingHeader(len(payload), ""), Chunk: signing,
			})
			if err != nil {
				t.Fatal(err)
			}
			got, err := readBody(t, body, 7)
			if tc.want == "" {
				if err != nil || !bytes.Equal(got, payload) {
					t.Fatalf("got %q, %v", got, err)
				}
				return
			}
			requireCode(t, err, tc.want)
		})
	}
}

func TestSignedTrailerWithoutTrailerSignature(t *testing.T) {
	payload := []byte("data")
	encoded := encodeStream(payload, streamOptions{chunkSize: 4, signer: newTestChunkSigner(exampleSigning(t)),
		trailers: []string{"x-amz-checksum-crc32:" + crc32Base64(payload)}})
	_, err := readBody(t, newSignedTrailerBody(t, encoded, len(payload)), 16)
	requireCode(t, err, s3err.SignatureDoesNotMatch)
}

// A signed-trailer body that declared a trailer (x-amz-trailer) and ends
// with an empty trailer section has malformed trailing data, as S3 says,
// before any question of its trailer signature.
func TestSignedTrailerSectionMissing(t *testing.T) {
	payload := []byte("data")
	encoded := encodeStream(payload, streamOptions{chunkSize: 4, signer: newTestChunkSigner(exampleSigning(t))})
	_, err := readBody(t, newSignedTrailerBody(t, encoded, len(payload)), 16)
	requireCode(t, err, s3err.MalformedTrailerError)
}

func TestEncodedLengthMustMatchContentLength(t *testing.T) {
	encoded := "5\r\nhello\r\n0\r\n\r\n"
	for _, contentLength := range []int64{int64(len(encoded)) + 1, int64(len(encoded)) - 1} {
		body, err := NewBody(strings.NewReader(encoded), BodySpec{
			Mode: PayloadStreamingUnsignedTrailer, ContentLength: contentLength, Header: streamingHeader(5, ""),
		})
		if err != nil {
			t.Fatal(err)
		}
		_, err = readBody(t, body, 64)
		requireCode(t, err, s3err.IncompleteBody)
	}
}

// TestChunkSizes round-trips signed streams with chunk sizes from S3's
// minimum to 8 MiB (smaller ones: TestChunkSizeMinimum).
func TestChunkSizes(t *testing.T) {
	for _, size := range []int{minChunkSize, minChunkSize + 1, 64 << 10, 1 << 20, 8 << 20} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			payloadLength := min(3*size+1, 8<<20+17)
			payload := make([]byte, payloadLength)
			for i := range payload {
				payload[i] = byte(i * 7)
			}
			signing := exampleSigning(t)
			encoded := encodeStream(payload, streamOptions{
				chunkSize: size, signer: newTestChunkSigner(signing),
				trailers: []string{"x-amz-checksum-crc32:" + crc32Base64(payload)}, signTrailer: true,
			})
			body := newSignedTrailerBody(t, encoded, len(payload))
			got, err := readBody(t, body, 32<<10)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, payload) {
				t.Fatal("payload differs")
			}
		})
	}
}

// TestLargeChunkMemoryIsBounded decodes one 8 MiB chunk and checks the
// decoder allocated far less than the chunk: data streams through the hash.
func TestLargeChunkMemoryIsBounded(t *testing.T) {
	payload := bytes.Repeat([]byte{'z'}, 8<<20)
	encoded := encodeStream(payload, streamOptions{chunkSize: len(payload), signer: newTestChunkSigner(exampleSigning(t))})
	buf := make([]byte, 32<<10)
	body, err := NewBody(bytes.NewReader(encoded), BodySpec{
		Mode: PayloadStreamingSigned, ContentLength: int64(len(encoded)), Header: streamingHeader(len(payload), ""), Chunk: exampleSigning(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var total int
	for {
		n, err := body.Read(buf)
		total += n
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if total != len(payload) {
		t.Fatalf("decoded %d bytes", total)
	}
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 512<<10 {
		t.Fatalf("decoding an 8 MiB chunk allocated %d bytes", allocated)
	}
}

// fuzzTrailer is the checksum trailer the fuzz target declares in trailer modes.
const fuzzTrailer = "x-amz-checksum-crc32"

var fuzzModes = [...]PayloadMode{PayloadStreamingUnsignedTrailer, PayloadStreamingSigned, PayloadStreamingSignedTrailer}

// fuzzSeeds are valid and near-valid streams for every mode.
func fuzzSeeds(t testing.TB) []fuzzInput {
	payload := bytes.Repeat([]byte("hello fuzz world"), minChunkSize/8) // three chunks of minChunkSize and less
	crcLine := fuzzTrailer + ":" + crc32Base64(payload)
	signing := exampleSigning(t)
	return []fuzzInput{
		{encodeStream(payload, streamOptions{chunkSize: minChunkSize, trailers: []string{crcLine}}), uint32(len(payload)), 0, 3},
		{encodeStream(payload, streamOptions{chunkSize: 5, trailers: []string{crcLine}}), uint32(len(payload)), 0, 3},
		{[]byte("0\r\n\r\n"), 0, 0, 1},
		{[]byte("5;ext=1\r\nhello\r\n0\r\n" + crcLine + "\r\n"), 5, 0, 100},
		{encodeStream(payload, streamOptions{chunkSize: minChunkSize, signer: newTestChunkSigner(signing)}), uint32(len(payload)), 1, 7},
		{encodeStream(payload, streamOptions{chunkSize: minChunkSize + 1, signer: newTestChunkSigner(signing), trailers: []string{crcLine}, signTrailer: true}), uint32(len(payload)), 2, 64},
		{[]byte("ffffffffffffffff\r\n"), 5, 0, 9},
		{[]byte("5;" + strings.Repeat("x", 5000) + "\r\n"), 5, 0, 9},
	}
}

type fuzzInput struct {
	encoded       []byte
	decodedLength uint32
	mode          uint8
	readSize      uint16
}

// FuzzChunkedDecoder feeds arbitrary bytes to the aws-chunked decoder in
// every streaming mode. It must never panic, never return more data than the
// declared decoded length, always make progress, and fail only with a 4xx
// *s3err.Error.
func FuzzChunkedDecoder(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s.encoded, s.decodedLength, s.mode, s.readSize)
	}
	signing := exampleSigning(f)
	f.Fuzz(func(t *testing.T, encoded []byte, decodedLength uint32, mode uint8, readSize uint16) {
		payloadMode := fuzzModes[int(mode)%len(fuzzModes)]
		trailer := ""
		if payloadMode != PayloadStreamingSigned {
			trailer = fuzzTrailer
		}
		header := streamingHeader(int(decodedLength), trailer)
		contentLength := int64(len(encoded))
		if mode&0x80 != 0 {
			contentLength = -1
		}
		body, err := NewBody(bytes.NewReader(encoded), BodySpec{Mode: payloadMode, ContentLength: contentLength, Header: header, Chunk: signing})
		if err != nil {
			t.Fatalf("valid header rejected: %v", err)
		}
		buf := make([]byte, int(readSize)%(16<<10)+1)
		total := 0
		for reads := 0; ; reads++ {
			if reads > len(encoded)+2 {
				t.Fatal("decoder makes no progress")
			}
			n, err := body.Read(buf)
			if n < 0 || n > len(buf) {
				t.Fatalf("Read returned n=%d for a %d-byte buffer", n, len(buf))
			}
			total += n
			if total > int(decodedLength) || total > len(encoded) {
				t.Fatalf("decoded %d bytes from %d encoded, declared %d", total, len(encoded), decodedLength)
			}
			if err == io.EOF {
				if total != int(decodedLength) {
					t.Fatalf("io.EOF after %d bytes, declared %d", total, decodedLength)
				}
				return
			}
			if err != nil {
				var e *s3err.Error
				if !errors.As(err, &e) || e.Status() < 400 || e.Status() >= 500 {
					t.Fatalf("error %v is not a client error", err)
				}
				return
			}
		}
	})
}

func BenchmarkChunkedDecode(b *testing.B) {
	payload := bytes.Repeat([]byte("0123456789abcdef"), 4<<20/16)
	signing := exampleSigning(b)
	crcLine := "x-amz-checksum-crc32:" + crc32Base64(payload)
	cases := []struct {
		name    string
		mode    PayloadMode
		encoded []byte
		trailer string
	}{
		{"signed-64KiB", PayloadStreamingSigned,
			encodeStream(payload, streamOptions{chunkSize: 64 << 10, signer: newTestChunkSigner(signing)}), ""},
		{"signed-trailer-crc32-64KiB", PayloadStreamingSignedTrailer,
			encodeStream(payload, streamOptions{chunkSize: 64 << 10, signer: newTestChunkSigner(signing), trailers: []string{crcLine}, signTrailer: true}), "x-amz-checksum-crc32"},
		{"unsigned-trailer-crc32-64KiB", PayloadStreamingUnsignedTrailer,
			encodeStream(payload, streamOptions{chunkSize: 64 << 10, trailers: []string{crcLine}}), "x-amz-checksum-crc32"},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(payload)))
			buf := make([]byte, 64<<10)
			reader := bytes.NewReader(tc.encoded)
			for b.Loop() {
				reader.Reset(tc.encoded)
				body, err := NewBody(reader, BodySpec{Mode: tc.mode, ContentLength: int64(len(tc.encoded)),
					Header: streamingHeader(len(payload), tc.trailer), Chunk: signing})
				if err != nil {
					b.Fatal(err)
				}
				for {
					_, err := body.Read(buf)
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// sha256Hasher adapts crypto/sha256 to the md5simd.Hasher interface
// minio-go's streaming signer hashes with.
type sha256Hasher struct{ hash.Hash }

func (sha256Hasher) Close() {}

// TestMinioGoStreamingUploads decodes bodies framed and signed by
// minio-go's own streaming signer (the code minio-go clients send with over
// plain HTTP), with and without a signed trailing checksum.
func TestMinioGoStreamingUploads(t *testing.T) {
	const accessKey, secret, region = "AKIDMINIOGO", "minio-go-test-secret", "us-east-1"
	payload := make([]byte, 200<<10+123) // three full 64 KiB chunks and a partial one
	for i := range payload {
		payload[i] = byte(i*31 + 7)
	}
	crc := crc32.Checksum(payload, crc32.MakeTable(crc32.Castagnoli))
	crcValue := base64.StdEncoding.EncodeToString([]byte{byte(crc >> 24), byte(crc >> 16), byte(crc >> 8), byte(crc)})
	requestTime := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

	for _, withTrailer := range []bool{false, true} {
		t.Run(fmt.Sprintf("trailer=%v", withTrailer), func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPut, "http://127.0.0.1:9000/bucket/key", io.NopCloser(bytes.NewReader(payload)))
			if err != nil {
				t.Fatal(err)
			}
			if withTrailer {
				req.Trailer = http.Header{"X-Amz-Checksum-Crc32c": {crcValue}}
			}
			req = signer.StreamingSignV4(req, accessKey, secret, "", region, int64(len(payload)), requestTime, sha256Hasher{sha256.New()})
			encoded, err := io.ReadAll(req.Body)
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(encoded)) != req.ContentLength {
				t.Fatalf("minio-go announced %d bytes, sent %d", req.ContentLength, len(encoded))
			}

			auth := req.Header.Get("Authorization")
			seed := auth[strings.LastIndex(auth, "Signature=")+len("Signature="):]
			key := testkit.SigningKey(secret, requestTime, region)
			mode := PayloadStreamingSigned
			if req.Header.Get("X-Amz-Content-Sha256") == "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER" {
				mode = PayloadStreamingSignedTrailer
			}
			if withTrailer != (mode == PayloadStreamingSignedTrailer) {
				t.Fatalf("minio-go chose %s", req.Header.Get("X-Amz-Content-Sha256"))
			}
			body, err := NewBody(bytes.NewReader(encoded), BodySpec{
				Mode: mode, ContentLength: req.ContentLength, Header: req.Header,
				Chunk: &ChunkSigning{SigningKey: key, Time: requestTime, Scope: testkit.Scope(requestTime, region), SeedSignature: seed},
			})
			if err != nil {
				t.Fatal(err)
			}
			got, err := readBody(t, body, 10000)
			if err != nil {
				t.Fatalf("minio-go body rejected: %v", err)
			}
			if !bytes.Equal(got, payload) {
				t.Fatal("payload differs")
			}
			if withTrailer {
				if name, value, ok := body.Checksum(); !ok || name != "x-amz-checksum-crc32c" || value != crcValue {
					t.Fatalf("Checksum() = %q %q %v", name, value, ok)
				}
			}
		})
	}
}

// TestChunkSizeMinimum holds S3's rule that every chunk but the last data
// chunk has at least 8192 bytes (the cases of versitygw's
// UnsignedStreamingPayloadTrailer_invalid_chunk_size, which also runs
// against S3), and the Chunk and BadChunkSize S3 reports: the number of the
// chunk whose header showed the fault, and the small chunk's size.
func TestChunkSizeMinimum(t *testing.T) {
	cases := []struct {
		sizes        []int
		chunk, small string // "" when the stream is good
	}{
		{sizes: []int{8192, 8192, 100}},
		{sizes: []int{100}},
		{sizes: nil},
		{sizes: []int{10000, 9500, 20}},
		{sizes: []int{8200, 8201, 10000, 10}},
		{sizes: []int{100, 8192, 100}, chunk: "2", small: "100"},
		{sizes: []int{8192, 10, 100}, chunk: "3", small: "10"},
		{sizes: []int{10, 10, 10}, chunk: "2", small: "10"},
		{sizes: []int{10000, 10, 8192, 8192}, chunk: "3", small: "10"},
		{sizes: []int{8191, 8192}, chunk: "2", small: "8191"},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.sizes), func(t *testing.T) {
			encoded, decodedLength := testkit.UnsignedChunks(tc.sizes...)
			body, err := unsignedTrailerBody(t, string(encoded), decodedLength, "")
			if err != nil {
				t.Fatal(err)
			}
			got, err := readBody(t, body, 4096)
			if tc.chunk == "" {
				if err != nil || len(got) != decodedLength {
					t.Fatalf("good stream: %d bytes, %v", len(got), err)
				}
				return
			}
			e := requireCode(t, err, s3err.InvalidChunkSizeError)
			want := []s3err.Field{{Name: "Chunk", Value: tc.chunk}, {Name: "BadChunkSize", Value: tc.small}}
			if fmt.Sprint(e.Extra) != fmt.Sprint(want) || e.Status() != http.StatusBadRequest ||
				e.Message != "Only the last chunk is allowed to have a size less than 8192 bytes" {
				t.Fatalf("got %d %q %v, want 400 and %v", e.Status(), e.Message, e.Extra, want)
			}
		})
	}
	t.Run("signed", func(t *testing.T) {
		payload := bytes.Repeat([]byte{'s'}, 3000)
		encoded := encodeStream(payload, streamOptions{chunkSize: 1000, signer: newTestChunkSigner(exampleSigning(t))})
		body, err := NewBody(bytes.NewReader(encoded), BodySpec{Mode: PayloadStreamingSigned,
			ContentLength: int64(len(encoded)), Header: streamingHeader(len(payload), ""), Chunk: exampleSigning(t)})
		if err != nil {
			t.Fatal(err)
		}
		_, err = readBody(t, body, 512)
		requireCode(t, err, s3err.InvalidChunkSizeError)
	})
}

// TestLengthMismatchNamesBothNumbers: a decoded length other than
// x-amz-decoded-content-length gets S3's Content-Length wording and the two
// numbers S3 adds (NumberBytesExpected, NumberBytesProvided).
func TestLengthMismatchNamesBothNumbers(t *testing.T) {
	for _, tc := range []struct {
		encoded            string
		decodedLength      int
		expected, provided string
	}{
		{"5\r\nhello\r\n0\r\n\r\n", 3, "3", "5"},
		{"5\r\nhello\r\n0\r\n\r\n", 8, "8", "5"},
	} {
		body, err := unsignedTrailerBody(t, tc.encoded, tc.decodedLength, "")
		if err != nil {
			t.Fatal(err)
		}
		_, err = readBody(t, body, 64)
		e := requireCode(t, err, s3err.IncompleteBody)
		want := []s3err.Field{{Name: "NumberBytesExpected", Value: tc.expected}, {Name: "NumberBytesProvided", Value: tc.provided}}
		if e.Message != lengthMismatch || fmt.Sprint(e.Extra) != fmt.Sprint(want) {
			t.Fatalf("declared %d: %q %v, want %v", tc.decodedLength, e.Message, e.Extra, want)
		}
	}
}

// TestSignedTrailerFraming: in a signed trailer, the checksum line is
// followed by its signature; S3 answers anything else in that place, a
// signature of the wrong shape, or a line break that lost its LF as a
// broken body (versitygw's SignedStreamingPayloadTrailer_incomplete_body).
func TestSignedTrailerFraming(t *testing.T) {
	payload := []byte("abcdefg")
	crcLine := "x-amz-checksum-crc32:" + crc32Base64(payload)
	good := encodeStream(payload, streamOptions{chunkSize: minChunkSize, signer: newTestChunkSigner(exampleSigning(t)),
		trailers: []string{crcLine}, signTrailer: true})
	signatureLine := bytes.Index(good, []byte("x-amz-trailer-signature:"))
	signatureValue := signatureLine + len("x-amz-trailer-signature:")
	splice := func(from, to int, with string) []byte {
		return append(append(bytes.Clone(good[:from]), with...), good[to:]...)
	}
	cases := []struct {
		name    string
		encoded []byte
		want    s3err.Code
	}{
		{"valid", good, ""},
		{"checksum line's LF lost", splice(signatureLine-1, signatureLine, "bcd"), s3err.IncompleteBody},
		{"another line where the signature belongs", splice(signatureLine+4, signatureLine+7, "invalid"), s3err.IncompleteBody},
		{"signature one digit long", splice(signatureValue, signatureValue+4, "abcde"), s3err.IncompleteBody},
		{"signature wrong", splice(signatureValue, signatureValue+1, string(flipHexOrByte(good[signatureValue]))), s3err.SignatureDoesNotMatch},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readBody(t, newSignedTrailerBody(t, tc.encoded, len(payload)), 5)
			if tc.want == "" {
				if err != nil || !bytes.Equal(got, payload) {
					t.Fatalf("got %q, %v", got, err)
				}
				return
			}
			e := requireCode(t, err, tc.want)
			if tc.want == s3err.IncompleteBody && e.Message != bodyBrokeOff {
				t.Fatalf("message %q", e.Message)
			}
		})
	}
}

// A chunk that runs past the declared length and is larger than
// maxOvershootDiscard is a length mismatch at once: its bytes are not read
// (here they are not even there).
func TestHugeOvershootingChunkIsNotRead(t *testing.T) {
	encoded := fmt.Sprintf("%x\r\nhello", maxOvershootDiscard+1)
	body, err := unsignedTrailerBody(t, encoded, 5, "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = readBody(t, body, 64)
	if e := requireCode(t, err, s3err.IncompleteBody); e.Message != lengthMismatch {
		t.Fatalf("%q, want the length mismatch", e.Message)
	}
}

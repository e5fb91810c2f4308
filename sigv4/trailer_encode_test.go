package sigv4

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/s3cond/s3cond/s3err"
)

// TestEncodeUnsignedTrailerRoundTrip re-frames verified signed bodies and
// decodes the result as a backend would: the payload and checksum survive
// and the announced length is exact.
func TestEncodeUnsignedTrailerRoundTrip(t *testing.T) {
	const chunkSize = minChunkSize
	for _, size := range []int{0, 1, 999, chunkSize, chunkSize + 1, 5*chunkSize + 17} {
		for _, withTrailer := range []bool{true, false} {
			t.Run(fmt.Sprintf("%d-trailer-%v", size, withTrailer), func(t *testing.T) {
				payload := bytes.Repeat([]byte{'q'}, size)
				options := streamOptions{chunkSize: 3 * minChunkSize / 2, signer: newTestChunkSigner(exampleSigning(t)), signTrailer: true}
				trailer := ""
				if withTrailer {
					trailer = "x-amz-checksum-crc32"
					options.trailers = []string{trailer + ":" + crc32Base64(payload)}
				}
				encoded := encodeStream(payload, options)
				source, err := NewBody(bytes.NewReader(encoded), BodySpec{Mode: PayloadStreamingSignedTrailer,
					ContentLength: int64(len(encoded)), Header: streamingHeader(size, trailer), Chunk: exampleSigning(t)})
				if err != nil {
					t.Fatal(err)
				}
				reframed, length := EncodeUnsignedTrailer(source, chunkSize)
				out, err := io.ReadAll(reframed)
				if err != nil {
					t.Fatal(err)
				}
				if int64(len(out)) != length {
					t.Fatalf("announced %d bytes, produced %d", length, len(out))
				}
				backend, err := NewBody(bytes.NewReader(out), BodySpec{Mode: PayloadStreamingUnsignedTrailer,
					ContentLength: length, Header: streamingHeader(size, trailer)})
				if err != nil {
					t.Fatal(err)
				}
				got, err := readBody(t, backend, 512)
				if err != nil || !bytes.Equal(got, payload) {
					t.Fatalf("re-framed stream does not decode: %v", err)
				}
				if withTrailer {
					if _, value, ok := backend.Checksum(); !ok || value != crc32Base64(payload) {
						t.Fatalf("trailer lost: %q %v", value, ok)
					}
				}
			})
		}
	}
}

func TestEncodeUnsignedTrailerNeverEndsUnverified(t *testing.T) {
	payload := bytes.Repeat([]byte{'r'}, 5*minChunkSize/2)
	encoded := encodeStream(payload, streamOptions{chunkSize: minChunkSize, signer: newTestChunkSigner(exampleSigning(t)),
		trailers: []string{"x-amz-checksum-crc32:" + crc32Base64(payload[1:])}, signTrailer: false})
	// Unsigned trailer mode makes the wrong checksum the only fault.
	encoded = bytes.ReplaceAll(encoded, []byte(";chunk-signature="), []byte(";x="))
	source, err := NewBody(bytes.NewReader(encoded), BodySpec{Mode: PayloadStreamingUnsignedTrailer,
		ContentLength: int64(len(encoded)), Header: streamingHeader(len(payload), "x-amz-checksum-crc32")})
	if err != nil {
		t.Fatal(err)
	}
	reframed, _ := EncodeUnsignedTrailer(source, 1024)
	out, err := io.ReadAll(reframed)
	requireCode(t, err, s3err.BadDigest)
	if bytes.Contains(out, []byte("\r\n0\r\n")) {
		t.Fatal("final chunk emitted for a body that failed verification")
	}
}

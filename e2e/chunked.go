package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"net/http"
	"strconv"
	"time"

	"github.com/s3cond/s3cond/internal/testkit"
)

// ChunkedUpload builds a signed aws-chunked PUT body
// (STREAMING-AWS4-HMAC-SHA256-PAYLOAD, or -TRAILER with a CRC32 trailer) the
// way SDKs do, with hooks to break it in the ways an attacker or a flaky
// network would.
type ChunkedUpload struct {
	Data      []byte
	ChunkSize int
	Trailer   bool // send x-amz-checksum-crc32 as a signed trailer

	// Tampering, applied after signing.
	FlipDataByte       int  // flip the byte at this offset of Data (−1: none)
	FlipChunkSignature int  // corrupt the signature of this chunk (−1: none)
	WrongChecksum      bool // trailer carries a wrong CRC32, correctly signed
	FlipTrailerSig     bool // corrupt the trailer signature
	TruncateAt         int  // cut the encoded body after this many bytes (0: no)
}

// NewChunkedUpload returns an honest upload of data in chunks of chunkSize.
func NewChunkedUpload(data []byte, chunkSize int, trailer bool) *ChunkedUpload {
	return &ChunkedUpload{Data: data, ChunkSize: chunkSize, Trailer: trailer, FlipDataByte: -1, FlipChunkSignature: -1}
}

// Request builds the signed PUT for endpoint+path.
func (u *ChunkedUpload) Request(endpoint, path string, cred Credentials, signTime time.Time) (*http.Request, error) {
	mode := StreamingSignedPayload
	if u.Trailer {
		mode = StreamingSignedTrailer
	}
	r, err := http.NewRequest(http.MethodPut, endpoint+path, nil)
	if err != nil {
		return nil, fmt.Errorf("build chunked request: %w", err)
	}
	r.Header.Set("Content-Encoding", "aws-chunked")
	r.Header.Set("X-Amz-Decoded-Content-Length", strconv.Itoa(len(u.Data)))
	if u.Trailer {
		r.Header.Set("X-Amz-Trailer", "x-amz-checksum-crc32")
	}
	// The signer signs Content-Length when it is set, so it must be final
	// before signing: compute the encoded length from an unsigned encoding.
	encodedLen := len(u.encode(make([]byte, 32), signTime, cred))
	if u.TruncateAt > 0 {
		encodedLen = u.TruncateAt
	}
	r.ContentLength = int64(encodedLen)
	seed, err := SignRequest(r, cred, mode, signTime)
	if err != nil {
		return nil, err
	}
	seedSig, err := hex.DecodeString(seed)
	if err != nil {
		return nil, fmt.Errorf("seed signature %q: %w", seed, err)
	}
	body := u.encode(seedSig, signTime, cred)
	if u.TruncateAt > 0 {
		body = body[:u.TruncateAt]
	}
	r.Body = httpBody(body)
	r.GetBody = nil
	return r, nil
}

func (u *ChunkedUpload) encode(seedSig []byte, signTime time.Time, cred Credentials) []byte {
	signer := testkit.NewChunkSigner(testkit.SigningKey(cred.Secret, signTime, Region), signTime,
		testkit.Scope(signTime, Region), hex.EncodeToString(seedSig))

	var out bytes.Buffer
	chunks := splitChunks(u.Data, u.ChunkSize)
	chunks = append(chunks, nil) // the final, empty chunk
	offset := 0
	for i, chunk := range chunks {
		sig := signer.SignChunk(chunk)
		sent := chunk
		if u.FlipDataByte >= offset && u.FlipDataByte < offset+len(chunk) {
			sent = bytes.Clone(chunk)
			sent[u.FlipDataByte-offset] ^= 0x01
		}
		if i == u.FlipChunkSignature {
			sig = flipHex(sig)
		}
		fmt.Fprintf(&out, "%x;chunk-signature=%s\r\n", len(chunk), sig)
		if len(chunk) > 0 {
			out.Write(sent)
			out.WriteString("\r\n")
		}
		offset += len(chunk)
	}
	if !u.Trailer {
		out.WriteString("\r\n")
		return out.Bytes()
	}
	checksum := crc32.ChecksumIEEE(u.Data)
	if u.WrongChecksum {
		checksum++
	}
	var raw [4]byte
	binary.BigEndian.PutUint32(raw[:], checksum)
	trailerLine := "x-amz-checksum-crc32:" + base64.StdEncoding.EncodeToString(raw[:])
	trailerSig := signer.SignTrailer(trailerLine + "\n")
	if u.FlipTrailerSig {
		trailerSig = flipHex(trailerSig)
	}
	out.WriteString(trailerLine + "\r\n")
	out.WriteString("x-amz-trailer-signature:" + trailerSig + "\r\n\r\n")
	return out.Bytes()
}

func splitChunks(data []byte, size int) [][]byte {
	var chunks [][]byte
	for len(data) > 0 {
		n := min(size, len(data))
		chunks = append(chunks, data[:n])
		data = data[n:]
	}
	return chunks
}

// flipHex changes the first hex digit, keeping the string well-formed.
func flipHex(s string) string {
	if s[0] == '0' {
		return "1" + s[1:]
	}
	return "0" + s[1:]
}

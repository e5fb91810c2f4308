package testkit

import (
	"bytes"
	"strconv"
)

// UnsignedChunks frames payload bytes as an aws-chunked body (the framing of
// STREAMING-UNSIGNED-PAYLOAD-TRAILER) in chunks of the given sizes, then the
// final empty chunk, without a trailer. Chunk i repeats the letter 'a'+i, so
// a body that loses or reorders a chunk does not compare equal.
func UnsignedChunks(sizes ...int) (encoded []byte, decodedLength int) {
	var b bytes.Buffer
	for i, size := range sizes {
		b.WriteString(strconv.FormatInt(int64(size), 16) + "\r\n")
		b.Write(bytes.Repeat([]byte{byte('a' + i%26)}, size))
		b.WriteString("\r\n")
		decodedLength += size
	}
	b.WriteString("0\r\n\r\n")
	return b.Bytes(), decodedLength
}

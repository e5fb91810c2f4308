// Package pattern makes deterministic, incompressible object bodies of any
// size in constant memory, for tests and benchmarks: the same seed and size
// always give the same bytes, so an upload can be checked by hash without
// ever holding it.
package pattern

import (
	"errors"
	"fmt"
	"io"
	"sync"
)

// patternLength is prime so that the pattern does not line up with the
// power-of-two buffer sizes of HTTP stacks and storage: a backend that
// deduplicates or compresses aligned blocks would otherwise see repeats.
const patternLength = 65521

// pattern is computed once and never written afterwards: every reader shares
// it, so generating an object costs a memcpy, not a random-number generator.
var pattern = sync.OnceValue(func() []byte {
	block := make([]byte, patternLength)
	state := uint64(0x9E3779B97F4A7C15)
	for i := range block {
		// xorshift64: cheap, deterministic, and far from compressible.
		state ^= state << 13
		state ^= state >> 7
		state ^= state << 17
		block[i] = byte(state >> 32)
	}
	return block
})

// Reader yields Size bytes of deterministic content chosen by Seed,
// without ever holding the object in memory: byte i is the shared pattern at
// position (i + offset(Seed)) mod its length. It is an io.ReadSeeker so that
// SDKs can hash the payload and rewind, as they do for retries and SigV4.
type Reader struct {
	offset int64
	size   int64
	pos    int64
}

// New returns a reader of size bytes whose content depends only
// on seed and size.
func New(seed uint64, size int64) *Reader {
	if size < 0 {
		size = 0
	}
	// A multiplicative hash spreads consecutive seeds over the pattern, so
	// objects written one after another differ from their first byte.
	offset := int64((seed * 0x9E3779B97F4A7C15) % patternLength)
	return &Reader{offset: offset, size: size}
}

// Size is the total length of the content.
func (r *Reader) Size() int64 { return r.size }

// Read implements io.Reader.
func (r *Reader) Read(p []byte) (int, error) {
	n, err := r.ReadAt(p, r.pos)
	r.pos += int64(n)
	if err == io.EOF && n > 0 {
		err = nil // the next Read reports the end
	}
	return n, err
}

// ReadAt implements io.ReaderAt, so io.NewSectionReader can cut parts out
// of an object for multipart uploads.
func (r *Reader) ReadAt(p []byte, pos int64) (int, error) {
	if pos >= r.size {
		return 0, io.EOF
	}
	short := false
	if remaining := r.size - pos; int64(len(p)) > remaining {
		p, short = p[:remaining], true
	}
	block := pattern()
	n := 0
	for n < len(p) {
		n += copy(p[n:], block[(pos+int64(n)+r.offset)%patternLength:])
	}
	if short {
		return n, io.EOF
	}
	return n, nil
}

// Seek implements io.Seeker.
func (r *Reader) Seek(offset int64, whence int) (int64, error) {
	var target int64
	switch whence {
	case io.SeekStart:
		target = offset
	case io.SeekCurrent:
		target = r.pos + offset
	case io.SeekEnd:
		target = r.size + offset
	default:
		return r.pos, fmt.Errorf("pattern reader: invalid whence %d", whence)
	}
	if target < 0 {
		return r.pos, errors.New("pattern reader: seek before the start")
	}
	r.pos = target
	return target, nil
}

// Bytes is the whole stream of New(seed, size) in memory, for small bodies.
func Bytes(seed uint64, size int) []byte {
	b := make([]byte, size)
	_, _ = New(seed, int64(size)).ReadAt(b, 0)
	return b
}

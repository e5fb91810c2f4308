package bench

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

// PatternReader yields Size bytes of deterministic content chosen by Seed,
// without ever holding the object in memory: byte i is the shared pattern at
// position (i + offset(Seed)) mod its length. It is an io.ReadSeeker so that
// SDKs can hash the payload and rewind, as they do for retries and SigV4.
type PatternReader struct {
	offset int64
	size   int64
	pos    int64
}

// NewPatternReader returns a reader of size bytes whose content depends only
// on seed and size.
func NewPatternReader(seed uint64, size int64) *PatternReader {
	if size < 0 {
		size = 0
	}
	// A multiplicative hash spreads consecutive seeds over the pattern, so
	// objects written one after another differ from their first byte.
	offset := int64((seed * 0x9E3779B97F4A7C15) % patternLength)
	return &PatternReader{offset: offset, size: size}
}

// Size is the total length of the content.
func (r *PatternReader) Size() int64 { return r.size }

// Read implements io.Reader.
func (r *PatternReader) Read(p []byte) (int, error) {
	if r.pos >= r.size {
		return 0, io.EOF
	}
	if remaining := r.size - r.pos; int64(len(p)) > remaining {
		p = p[:remaining]
	}
	block := pattern()
	n := 0
	for n < len(p) {
		start := (r.pos + r.offset) % patternLength
		copied := copy(p[n:], block[start:])
		n += copied
		r.pos += int64(copied)
	}
	return n, nil
}

// Seek implements io.Seeker.
func (r *PatternReader) Seek(offset int64, whence int) (int64, error) {
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

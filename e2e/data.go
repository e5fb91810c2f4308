package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
)

// patternPeriod is deliberately not a power of two, so chunks of any usual
// size (64 KiB, 5 MiB, 8 MiB) that were dropped, repeated or reordered would
// change the content and its hash.
const patternPeriod = 1<<20 + 7

// PatternReader is a seekable stream of Size deterministic pseudo-random
// bytes derived from Seed, in constant memory (one period of the pattern,
// shifted by the block index so consecutive periods differ).
type PatternReader struct {
	Size    int64
	pattern []byte
	pos     int64
}

// NewPatternReader returns a stream of size bytes determined by seed.
func NewPatternReader(seed uint64, size int64) *PatternReader {
	pattern := make([]byte, patternPeriod)
	rng := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16), byte(seed >> 24),
		byte(seed >> 32), byte(seed >> 40), byte(seed >> 48), byte(seed >> 56)})
	_, _ = rng.Read(pattern)
	return &PatternReader{Size: size, pattern: pattern}
}

func (r *PatternReader) Read(p []byte) (int, error) {
	n, err := r.ReadAt(p, r.pos)
	r.pos += int64(n)
	return n, err
}

// ReadAt lets io.NewSectionReader cut parts out of the stream.
func (r *PatternReader) ReadAt(p []byte, pos int64) (int, error) {
	if pos >= r.Size {
		return 0, io.EOF
	}
	short := false
	if remaining := r.Size - pos; int64(len(p)) > remaining {
		p = p[:remaining]
		short = true
	}
	n := 0
	for n < len(p) {
		period := pos / patternPeriod
		offset := (pos + period*131) % patternPeriod
		c := copy(p[n:], r.pattern[offset:])
		// Each period starts at a different offset, so stop at its end.
		if rest := patternPeriod - (pos % patternPeriod); int64(c) > rest {
			c = int(rest)
		}
		n += c
		pos += int64(c)
	}
	if short {
		return n, io.EOF
	}
	return n, nil
}

// Seek lets the SDK rewind the body after hashing it.
func (r *PatternReader) Seek(offset int64, whence int) (int64, error) {
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = r.pos + offset
	case io.SeekEnd:
		abs = r.Size + offset
	default:
		return 0, errors.New("pattern reader: bad whence")
	}
	if abs < 0 {
		return 0, fmt.Errorf("pattern reader: negative position %d", abs)
	}
	r.pos = abs
	return abs, nil
}

// SHA256 hashes everything r yields from its current position to the end.
func SHA256(r io.Reader) (string, int64, error) {
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		return "", n, fmt.Errorf("hash stream: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// PatternBytes is the whole pattern stream in memory, for small bodies.
func PatternBytes(seed uint64, size int) []byte {
	b, err := io.ReadAll(NewPatternReader(seed, int64(size)))
	if err != nil {
		panic(err) // PatternReader never fails
	}
	return b
}

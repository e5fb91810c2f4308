package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/s3cond/s3cond/internal/pattern"
)

// PatternReader is a seekable stream of deterministic bytes in constant
// memory: see internal/pattern.
type PatternReader = pattern.Reader

// NewPatternReader returns the stream of size bytes determined by seed.
func NewPatternReader(seed uint64, size int64) *PatternReader { return pattern.New(seed, size) }

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
func PatternBytes(seed uint64, size int) []byte { return pattern.Bytes(seed, size) }

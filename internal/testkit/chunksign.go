package testkit

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// The formulas below are SigV4's, as AWS documents them for S3 streaming
// uploads, written out again on purpose: they share no code with sigv4,
// so sigv4's decoder and verifier are checked against an implementation
// that cannot carry the same mistake.

// SigningKey is SigV4's signing key for S3 in region on the day of at.
func SigningKey(secret string, at time.Time, region string) []byte {
	key := hmacSHA256([]byte("AWS4"+secret), at.UTC().Format("20060102"))
	for _, part := range []string{region, "s3", "aws4_request"} {
		key = hmacSHA256(key, part)
	}
	return key
}

// Scope is the credential scope of an S3 request in region signed at at.
func Scope(at time.Time, region string) string {
	return at.UTC().Format("20060102") + "/" + region + "/s3/aws4_request"
}

// ChunkSigner signs an aws-chunked body's chunks, then its trailer, in
// order, each signature chaining from the one before (the first from the
// request's seed signature), as SDKs do for STREAMING-AWS4-HMAC-SHA256-*.
type ChunkSigner struct {
	key      []byte
	amzDate  string
	scope    string
	previous string
}

// NewChunkSigner starts the chain at the request's seed signature.
func NewChunkSigner(signingKey []byte, at time.Time, scope, seedSignature string) *ChunkSigner {
	return &ChunkSigner{key: signingKey, amzDate: at.UTC().Format("20060102T150405Z"), scope: scope, previous: seedSignature}
}

// SignChunk is the chunk-signature of the next chunk, data (nil for the
// final, empty chunk).
func (s *ChunkSigner) SignChunk(data []byte) string {
	return s.chain("AWS4-HMAC-SHA256-PAYLOAD", sha256Hex(nil), sha256Hex(data))
}

// SignTrailer is the x-amz-trailer-signature of the trailer lines, each
// "name:value\n".
func (s *ChunkSigner) SignTrailer(lines string) string {
	return s.chain("AWS4-HMAC-SHA256-TRAILER", sha256Hex([]byte(lines)))
}

func (s *ChunkSigner) chain(algorithm string, hashes ...string) string {
	sts := strings.Join(append([]string{algorithm, s.amzDate, s.scope, s.previous}, hashes...), "\n")
	s.previous = hex.EncodeToString(hmacSHA256(s.key, sts))
	return s.previous
}

func hmacSHA256(key []byte, data string) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(data))
	return mac.Sum(nil)
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

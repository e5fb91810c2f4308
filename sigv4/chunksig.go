package sigv4

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/s3cond/s3cond/s3err"
)

// ChunkSigning is what the chunk and trailer signatures of a signed
// aws-chunked body are chained from.
type ChunkSigning struct {
	SigningKey    []byte    // derived key for (secret, yyyymmdd, region, "s3")
	Time          time.Time // the request's X-Amz-Date
	Scope         string    // "20130524/us-east-1/s3/aws4_request"
	SeedSignature string    // hex signature of the request itself
}

const (
	chunkStringToSignPrefix   = "AWS4-HMAC-SHA256-PAYLOAD\n"
	trailerStringToSignPrefix = "AWS4-HMAC-SHA256-TRAILER\n"
)

// signatureChain verifies the signatures of successive chunks and of the
// trailer; each is signed over the signature before it, so a chunk cannot be
// dropped, reordered or moved to another request.
type signatureChain struct {
	key      []byte
	amzDate  string
	scope    string
	previous string // hex signature the next one is chained to
}

func newSignatureChain(s *ChunkSigning) *signatureChain {
	return &signatureChain{
		key:      s.SigningKey,
		amzDate:  s.Time.UTC().Format(amzDateLayout),
		scope:    s.Scope,
		previous: s.SeedSignature,
	}
}

// verifyChunk checks the signature a chunk header claimed against the
// SHA-256 of the chunk's data, and advances the chain on success.
func (c *signatureChain) verifyChunk(claimed, dataSHA256Hex string) error {
	stringToSign := chunkStringToSignPrefix + c.amzDate + "\n" + c.scope + "\n" + c.previous + "\n" +
		EmptyPayloadHash + "\n" + dataSHA256Hex
	return c.verify(claimed, stringToSign, "chunk")
}

// verifyTrailer checks the trailer signature over the trailer lines in their
// canonical form (each "name:value\n").
func (c *signatureChain) verifyTrailer(claimed string, canonicalTrailer []byte) error {
	sum := sha256.Sum256(canonicalTrailer)
	stringToSign := trailerStringToSignPrefix + c.amzDate + "\n" + c.scope + "\n" + c.previous + "\n" +
		hex.EncodeToString(sum[:])
	return c.verify(claimed, stringToSign, "trailer")
}

func (c *signatureChain) verify(claimed, stringToSign, what string) error {
	mac := hmac.New(sha256.New, c.key)
	mac.Write([]byte(stringToSign))
	expected := mac.Sum(nil)
	// A signature that is not hex cannot match; decoding first keeps the
	// comparison over fixed-length raw bytes, in constant time.
	claimedRaw, err := hex.DecodeString(claimed)
	if err != nil || !hmac.Equal(expected, claimedRaw) {
		e := s3err.New(s3err.SignatureDoesNotMatch)
		e.Cause = errors.New("aws-chunked " + what + " signature does not match")
		return e
	}
	c.previous = hex.EncodeToString(expected)
	return nil
}

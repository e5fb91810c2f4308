package sigv4

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"sync"
)

// signScratch is the working memory of one signature computation: the
// buffers the canonical request and the string to sign are built in, and a
// SHA-256 state for HMACs. It is pooled, so that signing and verifying a
// request allocate nothing of their own: hmac.New, sha256.New,
// hex.EncodeToString and strings.Builder each cost an allocation per use,
// and a request used about twenty of them.
type signScratch struct {
	canonical []byte   // the canonical request
	toSign    []byte   // the string to sign, and other short-lived text
	names     []string // header names to sign
	sha       hash.Hash
	pad       [sha256.BlockSize]byte
	sum       [sha256.Size]byte
}

// maxPooledScratch bounds the buffers a pooled scratch keeps: a request
// with an unusually long query or header set does not pin its buffers.
const maxPooledScratch = 16 << 10

var signScratches = sync.Pool{New: func() any {
	return &signScratch{
		canonical: make([]byte, 0, 1024),
		toSign:    make([]byte, 0, 256),
		names:     make([]string, 0, 32),
		sha:       sha256.New(),
	}
}}

func getSignScratch() *signScratch { return signScratches.Get().(*signScratch) }

func (s *signScratch) release() {
	if cap(s.canonical) > maxPooledScratch || cap(s.toSign) > maxPooledScratch || cap(s.names) > 256 {
		return
	}
	clear(s.names[:cap(s.names)]) // drop references to header names
	s.canonical, s.toSign, s.names = s.canonical[:0], s.toSign[:0], s.names[:0]
	signScratches.Put(s)
}

// hmacSHA256 returns HMAC-SHA256(key, data) (RFC 2104) for a key of at most
// one block, as SigV4's derived signing keys (32 bytes) are, computed with
// the scratch's hash state instead of a new hmac.Hash.
func (s *signScratch) hmacSHA256(key, data []byte) [sha256.Size]byte {
	if len(key) > sha256.BlockSize {
		panic("sigv4: HMAC key longer than a block")
	}
	const ipad, opad = 0x36, 0x5c
	clear(s.pad[:])
	copy(s.pad[:], key)
	for i := range s.pad {
		s.pad[i] ^= ipad
	}
	s.sha.Reset()
	s.sha.Write(s.pad[:])
	s.sha.Write(data)
	inner := s.sha.Sum(s.sum[:0])
	for i := range s.pad {
		s.pad[i] ^= ipad ^ opad
	}
	s.sha.Reset()
	s.sha.Write(s.pad[:])
	s.sha.Write(inner)
	s.sha.Sum(s.sum[:0])
	return s.sum
}

// appendHex appends the lower-case hex of b to dst.
func appendHex(dst, b []byte) []byte {
	var digits [2 * sha256.Size]byte
	for len(b) > 0 {
		n := min(len(b), sha256.Size)
		hex.Encode(digits[:], b[:n])
		dst = append(dst, digits[:2*n]...)
		b = b[n:]
	}
	return dst
}

// appendStringToSign appends SigV4's string to sign for the canonical
// request in canonical: algorithm, request time (20060102T150405Z), scope
// (date/region/service/terminator), hex SHA-256 of the canonical request.
func appendStringToSign(dst, amzDate []byte, c credentialScope, canonical []byte) []byte {
	sum := sha256.Sum256(canonical)
	dst = append(dst, signingAlgorithm...)
	dst = append(dst, '\n')
	dst = append(dst, amzDate...)
	dst = append(dst, '\n')
	dst = appendScope(dst, c)
	dst = append(dst, '\n')
	return appendHex(dst, sum[:])
}

// appendScope appends the credential scope date/region/service/terminator.
func appendScope(dst []byte, c credentialScope) []byte {
	dst = append(dst, c.date...)
	dst = append(dst, '/')
	dst = append(dst, c.region...)
	dst = append(dst, '/')
	dst = append(dst, c.service...)
	dst = append(dst, '/')
	return append(dst, c.terminator...)
}

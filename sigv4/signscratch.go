package sigv4

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
)

// signScratch is the working memory of one signature computation: the
// buffers the canonical request and the string to sign are built in. It is
// pooled, so that signing and verifying a request reuse buffers instead of
// building strings; the HMACs are crypto/hmac's, pooled per derived key
// (signingkey.go).
type signScratch struct {
	canonical []byte   // the canonical request
	toSign    []byte   // the string to sign, and other short-lived text
	names     []string // header names to sign
	mac       []byte   // an HMAC, written through hash.Hash.Sum (which would move an array to the heap)
}

// maxPooledScratch bounds the buffers a pooled scratch keeps: a request
// with an unusually long query or header set does not pin its buffers.
const maxPooledScratch = 16 << 10

var signScratches = sync.Pool{New: func() any {
	return &signScratch{
		canonical: make([]byte, 0, 1024),
		toSign:    make([]byte, 0, 256),
		names:     make([]string, 0, 32),
		mac:       make([]byte, 0, sha256.Size),
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

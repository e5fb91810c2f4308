package sigv4

import (
	"crypto/hmac"
	"crypto/sha256"
	"net/http"
	"strings"
	"time"

	"github.com/s3cond/s3cond/s3err"
)

// Checking a client's signature: the canonical request and the string to
// sign built in a pooled signScratch (signscratch.go), compared in constant
// time.

// checkSignature recomputes the client's signature and compares it in
// constant time. The canonical URI is S3's (decoded once, UriEncoded once);
// if that fails and the path as sent differs from it, the path as sent is
// tried too, for clients that sign exactly what they put on the wire. The
// canonical request and string to sign are built in pooled buffers; only a
// failure turns them into strings, for the error.
func checkSignature(r *http.Request, fields authFields, payloadHash string, amzDate time.Time, key *signingKey, presigned bool) *s3err.Error {
	in := newCanonicalInput(r, fields, payloadHash, presigned)
	uri := canonicalURI(in.rawPath)
	s := getSignScratch()
	defer s.release()
	var ok bool
	var missing string
	s.canonical, missing, ok = in.appendCanonicalRequest(s.canonical[:0], uri)
	if !ok {
		return s3err.New(s3err.SignatureDoesNotMatch).
			With("AWSAccessKeyId", fields.credential.accessKeyID).
			With("HeadersNotPresent", missing)
	}
	if s.signatureMatches(key, fields, amzDate) {
		return nil
	}
	canonical, sts := string(s.canonical), string(s.toSign)
	if verbatim := verbatimURI(in.rawPath); verbatim != uri {
		s.canonical, _, _ = in.appendCanonicalRequest(s.canonical[:0], verbatim)
		if s.signatureMatches(key, fields, amzDate) {
			return nil
		}
	}
	return s3err.New(s3err.SignatureDoesNotMatch).
		With("AWSAccessKeyId", fields.credential.accessKeyID).
		With("StringToSign", sts).
		With("SignatureProvided", fields.signature).
		With("StringToSignBytes", spacedHex(sts)).
		With("CanonicalRequest", canonical).
		With("CanonicalRequestBytes", spacedHex(canonical))
}

// signatureMatches builds the string to sign for the canonical request in
// s.canonical into s.toSign, and compares its signature with the claimed
// hex in constant time over the raw bytes.
func (s *signScratch) signatureMatches(key *signingKey, fields authFields, amzDate time.Time) bool {
	s.toSign = appendClientStringToSign(s.toSign[:0], amzDate, fields.credential, s.canonical)
	return s.signs(key, fields.signature)
}

// signs reports whether claimedHex is the signature of s.toSign with key,
// comparing in constant time over the raw bytes.
func (s *signScratch) signs(key *signingKey, claimedHex string) bool {
	var claimed [sha256.Size]byte
	if !decodeHex(claimed[:], claimedHex) {
		return false
	}
	s.mac = key.sign(s.mac[:0], s.toSign)
	return hmac.Equal(s.mac, claimed[:])
}

// signatureMatches reports whether claimedHex is the signature of
// stringToSign with key (a POST policy's), in constant time.
func signatureMatches(key *signingKey, stringToSign, claimedHex string) bool {
	s := getSignScratch()
	defer s.release()
	s.toSign = append(s.toSign[:0], stringToSign...)
	return s.signs(key, claimedHex)
}

// appendClientStringToSign appends the string to sign of a client request
// (see stringToSign).
func appendClientStringToSign(dst []byte, amzDate time.Time, c credentialScope, canonical []byte) []byte {
	var date [len(amzDateLayout)]byte
	return appendStringToSign(dst, appendAmzDate(date[:0], amzDate), c, canonical)
}

// decodeHex decodes the hex string src into dst, which it must fill
// exactly; it reports whether it did.
func decodeHex(dst []byte, src string) bool {
	if len(src) != 2*len(dst) {
		return false
	}
	for i := range dst {
		hi, lo := src[2*i], src[2*i+1]
		if !isHex(hi) || !isHex(lo) {
			return false
		}
		dst[i] = unhex(hi)<<4 | unhex(lo)
	}
	return true
}

// spacedHex renders s as S3 does in StringToSignBytes: "41 57 53 ...".
func spacedHex(s string) string {
	const digits = "0123456789abcdef"
	var b strings.Builder
	b.Grow(len(s) * 3)
	for i := 0; i < len(s); i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte(digits[s[i]>>4])
		b.WriteByte(digits[s[i]&0xF])
	}
	return b.String()
}

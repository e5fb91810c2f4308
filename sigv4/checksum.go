package sigv4

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"net/http"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/minio/crc64nvme"
	"github.com/zeebo/xxh3"

	"github.com/s3cond/s3cond/s3err"
)

// castagnoliTable is computed once and only read afterwards.
var castagnoliTable = crc32.MakeTable(crc32.Castagnoli)

// NewCRC64NVME returns a CRC-64/NVME hash, S3's default object checksum:
// the one S3 records for an upload sent without a checksum, and so the one
// s3cond's own framing trailer carries (docs/spec.md §4). It is minio's
// crc64nvme (carry-less multiplication where the CPU has it), not
// hash/crc64 with the NVME table: hash/crc64 keeps slicing-by-8 tables
// only for its two built-in polynomials and rebuilt the 16 KiB table for
// this one on every Write of 2 KiB or more, which was 3.5 % of s3cond's
// CPU during framed 4 KiB PUTs (docs/performance-notes.md, issue 35 item 7).
// TestCRC64NVMEMatchesHashCRC64 holds it to hash/crc64's answers.
func NewCRC64NVME() hash.Hash64 { return crc64nvme.New() }

// UpdateCRC64NVME is NewCRC64NVME's Write on a bare state (0 to start):
// no allocation for a checksum kept in a larger struct.
func UpdateCRC64NVME(crc uint64, p []byte) uint64 { return crc64nvme.Update(crc, p) }

// checksumAlgorithm is one x-amz-checksum-* algorithm that S3 accepts.
type checksumAlgorithm struct {
	header string // lower-case header or trailer name, e.g. "x-amz-checksum-crc32"
	// canonicalHeader is header as Go's server keys it ("X-Amz-Checksum-Crc32"):
	// looked up directly, it costs no allocation, where Header.Values(header)
	// canonicalised the name on every request.
	canonicalHeader string
	name            string // S3's name in x-amz-sdk-checksum-algorithm and error messages, e.g. "CRC32"
	size            int    // digest length in bytes
	newHash         func() hash.Hash
}

// checksumAlgorithms lists every algorithm S3 supports for x-amz-checksum-*
// (the ChecksumAlgorithm enumeration of the S3 API, as aws-sdk-go-v2 models
// it). Every value is the base64 of the digest's bytes, big-endian: the
// xxHash digests in their canonical form (XXH128: high 64 bits first), all
// with seed 0, as AWS's own implementation (aws-c-checksums) writes them.
var checksumAlgorithms = [...]checksumAlgorithm{
	{header: "x-amz-checksum-crc32", canonicalHeader: "X-Amz-Checksum-Crc32", name: "CRC32", size: crc32.Size, newHash: func() hash.Hash { return crc32.NewIEEE() }},
	{header: "x-amz-checksum-crc32c", canonicalHeader: "X-Amz-Checksum-Crc32c", name: "CRC32C", size: crc32.Size, newHash: func() hash.Hash { return crc32.New(castagnoliTable) }},
	{header: "x-amz-checksum-crc64nvme", canonicalHeader: "X-Amz-Checksum-Crc64nvme", name: "CRC64NVME", size: crc64.Size, newHash: func() hash.Hash { return NewCRC64NVME() }},
	{header: "x-amz-checksum-sha1", canonicalHeader: "X-Amz-Checksum-Sha1", name: "SHA1", size: sha1.Size, newHash: sha1.New},
	{header: "x-amz-checksum-sha256", canonicalHeader: "X-Amz-Checksum-Sha256", name: "SHA256", size: sha256.Size, newHash: sha256.New},
	{header: "x-amz-checksum-sha512", canonicalHeader: "X-Amz-Checksum-Sha512", name: "SHA512", size: sha512.Size, newHash: sha512.New},
	{header: "x-amz-checksum-md5", canonicalHeader: "X-Amz-Checksum-Md5", name: "MD5", size: md5.Size, newHash: md5.New},
	{header: "x-amz-checksum-xxhash64", canonicalHeader: "X-Amz-Checksum-Xxhash64", name: "XXHASH64", size: 8, newHash: func() hash.Hash { return xxhash.New() }},
	{header: "x-amz-checksum-xxhash3", canonicalHeader: "X-Amz-Checksum-Xxhash3", name: "XXHASH3", size: 8, newHash: func() hash.Hash { return xxh3.New() }},
	{header: "x-amz-checksum-xxhash128", canonicalHeader: "X-Amz-Checksum-Xxhash128", name: "XXHASH128", size: 16, newHash: func() hash.Hash { return xxh3.New128() }},
}

// checksumByHeader finds the algorithm for a header or trailer name (any case).
func checksumByHeader(name string) (*checksumAlgorithm, bool) {
	for i := range checksumAlgorithms {
		if strings.EqualFold(checksumAlgorithms[i].header, name) {
			return &checksumAlgorithms[i], true
		}
	}
	return nil, false
}

// checksumByName finds the algorithm for an x-amz-sdk-checksum-algorithm value (any case).
func checksumByName(name string) (*checksumAlgorithm, bool) {
	for i := range checksumAlgorithms {
		if strings.EqualFold(checksumAlgorithms[i].name, name) {
			return &checksumAlgorithms[i], true
		}
	}
	return nil, false
}

// decodeChecksum returns the digest a base64 checksum value carries, or false
// when the value is not base64 of exactly the algorithm's digest length.
func (a *checksumAlgorithm) decodeChecksum(value string) ([]byte, bool) {
	digest, err := base64.StdEncoding.Strict().DecodeString(strings.TrimSpace(value))
	if err != nil || len(digest) != a.size {
		return nil, false
	}
	return digest, true
}

// encodedLength is the length of the base64 value for this algorithm.
func (a *checksumAlgorithm) encodedLength() int { return base64.StdEncoding.EncodedLen(a.size) }

// invalidValueError is S3's answer to a checksum value that does not decode.
func (a *checksumAlgorithm) invalidValueError(where string) *s3err.Error {
	return s3err.Newf(s3err.InvalidRequest, "Value for %s %s is invalid.", a.header, where)
}

// mismatchError is S3's answer when the payload does not match the checksum.
func (a *checksumAlgorithm) mismatchError() *s3err.Error {
	return s3err.Newf(s3err.BadDigest, "The %s you specified did not match the calculated checksum.", a.name)
}

// headerChecksum finds the single x-amz-checksum-* header of a request.
// S3 refuses more than one with the message used below, before it looks at
// any value: two headers are refused as two even when one does not decode.
func headerChecksum(h http.Header) (alg *checksumAlgorithm, digest []byte, value string, err error) {
	var raw string
	for i := range checksumAlgorithms {
		candidate := &checksumAlgorithms[i]
		values := h[candidate.canonicalHeader]
		if len(values) == 0 {
			continue
		}
		if alg != nil || len(values) > 1 {
			return nil, nil, "", errMultipleChecksums()
		}
		alg, raw = candidate, values[0]
	}
	if alg == nil {
		return nil, nil, "", nil
	}
	decoded, ok := alg.decodeChecksum(raw)
	if !ok {
		return nil, nil, "", alg.invalidValueError("header")
	}
	return alg, decoded, strings.TrimSpace(raw), nil
}

func errMultipleChecksums() *s3err.Error {
	return s3err.Newf(s3err.InvalidRequest, "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.")
}

// contentMD5 decodes a Content-MD5 header; a value that is not base64 of 16
// bytes is S3's 400 InvalidDigest.
func contentMD5(h http.Header) ([]byte, error) {
	values := h.Values("Content-Md5")
	if len(values) == 0 {
		return nil, nil
	}
	if len(values) > 1 {
		return nil, s3err.New(s3err.InvalidDigest)
	}
	digest, err := base64.StdEncoding.Strict().DecodeString(strings.TrimSpace(values[0]))
	if err != nil || len(digest) != md5.Size {
		return nil, s3err.New(s3err.InvalidDigest)
	}
	return digest, nil
}

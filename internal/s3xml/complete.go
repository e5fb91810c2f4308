package s3xml

import (
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/s3cond/s3cond/s3err"
)

// Limits of a CompleteMultipartUpload body: S3's 10 000 parts, each with a
// part number, an ETag and every checksum S3 knows, fit well within the
// default limit.
const (
	MaxCompleteParts                  = 10000
	DefaultCompleteRequestLimit int64 = 8 << 20
)

// maxPartETagBytes bounds a part's ETag: S3's are 34 bytes; stores that
// make their own stay far below it.
const maxPartETagBytes = 256

// CompletePart is one <Part> of a CompleteMultipartUpload body, as checked:
// PartNumber in 1..10000, ETag in the ETag grammar (quotes kept as sent),
// each checksum the base64 of its algorithm's digest ("" = none), for
// every algorithm of S3's ChecksumAlgorithm: one the parser did not know
// would be dropped from the document the store reads, and the store would
// answer that the part's checksum is missing.
type CompletePart struct {
	PartNumber        int
	ETag              string
	ChecksumCRC32     string
	ChecksumCRC32C    string
	ChecksumCRC64NVME string
	ChecksumSHA1      string
	ChecksumSHA256    string
	ChecksumSHA512    string
	ChecksumMD5       string
	ChecksumXXHASH64  string
	ChecksumXXHASH3   string
	ChecksumXXHASH128 string
}

// CompleteRequest is the body of CompleteMultipartUpload.
type CompleteRequest struct {
	Parts []CompletePart
}

type completeWire struct {
	XMLName xml.Name           `xml:"CompleteMultipartUpload"`
	Xmlns   string             `xml:"xmlns,attr,omitempty"`
	Parts   []completePartWire `xml:"Part"`
}

// completePartWire is one <Part> as read: pointers tell a missing element
// from an empty one, and every element may appear once only (a second
// <PartNumber> would be read differently by different stores).
type completePartWire struct {
	PartNumber        []string `xml:"PartNumber"`
	ETag              []string `xml:"ETag"`
	ChecksumCRC32     []string `xml:"ChecksumCRC32"`
	ChecksumCRC32C    []string `xml:"ChecksumCRC32C"`
	ChecksumCRC64NVME []string `xml:"ChecksumCRC64NVME"`
	ChecksumSHA1      []string `xml:"ChecksumSHA1"`
	ChecksumSHA256    []string `xml:"ChecksumSHA256"`
	ChecksumSHA512    []string `xml:"ChecksumSHA512"`
	ChecksumMD5       []string `xml:"ChecksumMD5"`
	ChecksumXXHASH64  []string `xml:"ChecksumXXHASH64"`
	ChecksumXXHASH3   []string `xml:"ChecksumXXHASH3"`
	ChecksumXXHASH128 []string `xml:"ChecksumXXHASH128"`
}

type completePartOut struct {
	ChecksumCRC32     string `xml:"ChecksumCRC32,omitempty"`
	ChecksumCRC32C    string `xml:"ChecksumCRC32C,omitempty"`
	ChecksumCRC64NVME string `xml:"ChecksumCRC64NVME,omitempty"`
	ChecksumSHA1      string `xml:"ChecksumSHA1,omitempty"`
	ChecksumSHA256    string `xml:"ChecksumSHA256,omitempty"`
	ChecksumSHA512    string `xml:"ChecksumSHA512,omitempty"`
	ChecksumMD5       string `xml:"ChecksumMD5,omitempty"`
	ChecksumXXHASH64  string `xml:"ChecksumXXHASH64,omitempty"`
	ChecksumXXHASH3   string `xml:"ChecksumXXHASH3,omitempty"`
	ChecksumXXHASH128 string `xml:"ChecksumXXHASH128,omitempty"`
	ETag              string `xml:"ETag"`
	PartNumber        int    `xml:"PartNumber"`
}

type completeOutWire struct {
	XMLName xml.Name          `xml:"CompleteMultipartUpload"`
	Xmlns   string            `xml:"xmlns,attr"`
	Parts   []completePartOut `xml:"Part"`
}

// ParseCompleteRequest reads a CompleteMultipartUpload body of at most
// limit bytes (DefaultCompleteRequestLimit if limit <= 0) and checks it as
// S3 does: a body that is not well-formed, lists no part or more than
// 10 000, or has a part without exactly one PartNumber and ETag is
// MalformedXML; a part number outside 1..10000 is InvalidArgument; part
// numbers not strictly ascending are InvalidPartOrder; an ETag outside its
// grammar is InvalidPart; a checksum that is not the base64 of its
// algorithm's digest, or given twice, is InvalidArgument.
func ParseCompleteRequest(r io.Reader, limit int64) (*CompleteRequest, error) {
	var wire completeWire
	s := shape{roots: []string{"CompleteMultipartUpload"}, child: "Part", maxChildren: MaxCompleteParts}
	if err := parseRequest(r, limit, DefaultCompleteRequestLimit, s, &wire); err != nil {
		return nil, err
	}
	if len(wire.Parts) == 0 {
		return nil, s3err.Wrap(s3err.MalformedXML, fmt.Errorf("complete request lists no parts"))
	}
	req := &CompleteRequest{Parts: make([]CompletePart, 0, len(wire.Parts))}
	previous := 0
	for i, w := range wire.Parts {
		part, err := w.check(i + 1)
		if err != nil {
			return nil, err
		}
		if part.PartNumber <= previous {
			return nil, s3err.New(s3err.InvalidPartOrder)
		}
		previous = part.PartNumber
		req.Parts = append(req.Parts, part)
	}
	return req, nil
}

// check reads the n-th <Part>.
func (w completePartWire) check(n int) (CompletePart, error) {
	number, ok := single(w.PartNumber)
	if !ok {
		return CompletePart{}, s3err.Wrap(s3err.MalformedXML, fmt.Errorf("part %d needs exactly one PartNumber", n))
	}
	etag, ok := single(w.ETag)
	if !ok {
		return CompletePart{}, s3err.Wrap(s3err.MalformedXML, fmt.Errorf("part %d needs exactly one ETag", n))
	}
	part := CompletePart{ETag: strings.TrimSpace(etag)}
	var valid bool
	if part.PartNumber, valid = partNumber(strings.TrimSpace(number)); !valid {
		return CompletePart{}, s3err.Newf(s3err.InvalidArgument, "Part number must be an integer between 1 and 10000, inclusive").
			With("ArgumentName", "partNumber").With("ArgumentValue", clip(number))
	}
	if !partETag(part.ETag) {
		return CompletePart{}, s3err.New(s3err.InvalidPart)
	}
	checksums := []struct {
		name   string
		values []string
		size   int
		into   *string
	}{
		{"ChecksumCRC32", w.ChecksumCRC32, 4, &part.ChecksumCRC32},
		{"ChecksumCRC32C", w.ChecksumCRC32C, 4, &part.ChecksumCRC32C},
		{"ChecksumCRC64NVME", w.ChecksumCRC64NVME, 8, &part.ChecksumCRC64NVME},
		{"ChecksumSHA1", w.ChecksumSHA1, 20, &part.ChecksumSHA1},
		{"ChecksumSHA256", w.ChecksumSHA256, 32, &part.ChecksumSHA256},
		{"ChecksumSHA512", w.ChecksumSHA512, 64, &part.ChecksumSHA512},
		{"ChecksumMD5", w.ChecksumMD5, 16, &part.ChecksumMD5},
		{"ChecksumXXHASH64", w.ChecksumXXHASH64, 8, &part.ChecksumXXHASH64},
		{"ChecksumXXHASH3", w.ChecksumXXHASH3, 8, &part.ChecksumXXHASH3},
		{"ChecksumXXHASH128", w.ChecksumXXHASH128, 16, &part.ChecksumXXHASH128},
	}
	for _, c := range checksums {
		if len(c.values) == 0 {
			continue
		}
		value, ok := single(c.values)
		value = strings.TrimSpace(value)
		if !ok || !base64Digest(value, c.size) {
			// S3's answer, as versitygw's full-flow suite records it
			// (CompleteMultipartUpload_invalid_checksum_part).
			return CompletePart{}, s3err.Newf(s3err.InvalidArgument, "Invalid Base64 or multiple checksums present in request").
				With("ArgumentName", "Checksum").With("ArgumentValue", clip(value))
		}
		*c.into = value
	}
	return part, nil
}

func single(values []string) (string, bool) {
	if len(values) != 1 {
		return "", false
	}
	return values[0], true
}

// partNumber reads 1 to 5 ASCII digits in 1..10000.
func partNumber(v string) (int, bool) {
	if v == "" || len(v) > 5 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, false
		}
		n = n*10 + int(v[i]-'0')
	}
	return n, n >= 1 && n <= 10000
}

// partETag is an ETag as stores give parts: optionally in double quotes,
// then 1 to 256 of [A-Za-z0-9-_.:+=], so no '/', '\', quote or control
// byte a store could misread.
func partETag(v string) bool {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		v = v[1 : len(v)-1]
	}
	if v == "" || len(v) > maxPartETagBytes {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && !strings.ContainsRune("-_.:+=", rune(c)) {
			return false
		}
	}
	return true
}

// base64Digest reports whether v is the standard, padded base64 of size bytes.
func base64Digest(v string, size int) bool {
	if len(v) != base64.StdEncoding.EncodedLen(size) {
		return false
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(v)
	return err == nil && len(raw) == size
}

func clip(v string) string {
	if len(v) > 64 {
		return strings.ToValidUTF8(v[:64], "") + "..."
	}
	return v
}

// Marshal renders the checked request for the backend, in the S3
// namespace: the document the store reads is written from the checked
// values, never the client's bytes.
func (c *CompleteRequest) Marshal() []byte {
	wire := completeOutWire{Xmlns: Namespace, Parts: make([]completePartOut, 0, len(c.Parts))}
	for _, p := range c.Parts {
		wire.Parts = append(wire.Parts, completePartOut{
			ChecksumCRC32: p.ChecksumCRC32, ChecksumCRC32C: p.ChecksumCRC32C, ChecksumCRC64NVME: p.ChecksumCRC64NVME,
			ChecksumSHA1: p.ChecksumSHA1, ChecksumSHA256: p.ChecksumSHA256, ChecksumSHA512: p.ChecksumSHA512,
			ChecksumMD5: p.ChecksumMD5, ChecksumXXHASH64: p.ChecksumXXHASH64, ChecksumXXHASH3: p.ChecksumXXHASH3,
			ChecksumXXHASH128: p.ChecksumXXHASH128, ETag: p.ETag, PartNumber: p.PartNumber,
		})
	}
	return marshal(wire)
}

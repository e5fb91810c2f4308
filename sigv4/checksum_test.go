package sigv4

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"hash/crc32"
	"net/http"
	"strings"
	"testing"

	"github.com/s3cond/s3cond/s3err"
)

func crc32Base64(data []byte) string {
	var digest [4]byte
	sum := crc32.ChecksumIEEE(data)
	digest[0], digest[1], digest[2], digest[3] = byte(sum>>24), byte(sum>>16), byte(sum>>8), byte(sum)
	return base64.StdEncoding.EncodeToString(digest[:])
}

func hexToBase64(t testing.TB, h string) string {
	t.Helper()
	raw, err := hex.DecodeString(h)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(raw)
}

// knownChecksums are check values computed independently of the code under
// test: the CRC catalogue's "check" for "123456789"; the well-known SHA-1 and
// SHA-256 digests of "hello world"; MD5 and SHA-512 from coreutils' md5sum
// and sha512sum; the xxHash values from the reference implementation's CLI
// (Debian's xxhash 0.8.1: xxhsum -H1 for XXH64, -H3 for XXH3-64, -H2 for
// XXH3-128, which print the canonical big-endian digest, as S3 encodes it).
var knownChecksums = []struct {
	header, input, hexDigest string
}{
	{"x-amz-checksum-crc32", "123456789", "cbf43926"},
	{"x-amz-checksum-crc32c", "123456789", "e3069283"},
	{"x-amz-checksum-crc64nvme", "123456789", "ae8b14860a799888"},
	{"x-amz-checksum-sha1", "hello world", "2aae6c35c94fcfb415dbe95f408b9ce91ee846ed"},
	{"x-amz-checksum-sha256", "hello world", "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9"},
	{"x-amz-checksum-md5", "hello world", "5eb63bbbe01eeed093cb22bb8f5acdc3"},
	{"x-amz-checksum-sha512", "hello world", "309ecc489c12d6eb4cc40f50c902f2b4d0ed77ee511a7c7a9bcd3ca86d4cd86f989dd35bc5ff499670da34255b45b0cfd830e81f605dcf7dc5542e93ae9cd76f"},
	{"x-amz-checksum-sha512", "", "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"},
	{"x-amz-checksum-xxhash64", "", "ef46db3751d8e999"},
	{"x-amz-checksum-xxhash64", "123456789", "8cb841db40e6ae83"},
	{"x-amz-checksum-xxhash64", "hello world", "45ab6734b21e6968"},
	{"x-amz-checksum-xxhash3", "", "2d06800538d394c2"},
	{"x-amz-checksum-xxhash3", "123456789", "72dcb18b67a17dff"},
	{"x-amz-checksum-xxhash3", "hello world", "d447b1ea40e6988b"},
	{"x-amz-checksum-xxhash128", "", "99aa06d3014798d86001c324468d497f"},
	{"x-amz-checksum-xxhash128", "123456789", "33119477ede5dcd5e9716427681d5860"},
	{"x-amz-checksum-xxhash128", "hello world", "df8d09e93f874900a99b8775cc15b6c7"},
}

func TestChecksumAlgorithmsKnownValues(t *testing.T) {
	for _, kc := range knownChecksums {
		alg, ok := checksumByHeader(kc.header)
		if !ok {
			t.Fatalf("%s not supported", kc.header)
		}
		h := alg.newHash()
		h.Write([]byte(kc.input))
		if got := hex.EncodeToString(h.Sum(nil)); got != kc.hexDigest {
			t.Errorf("%s(%q) = %s, want %s", alg.name, kc.input, got, kc.hexDigest)
		}
		if alg.encodedLength() != len(hexToBase64(t, kc.hexDigest)) {
			t.Errorf("%s encodedLength %d", alg.name, alg.encodedLength())
		}
	}
}

func unsignedBody(t testing.TB, payload []byte, h http.Header) (*Body, error) {
	t.Helper()
	return NewBody(bytes.NewReader(payload), BodySpec{Mode: PayloadUnsigned, ContentLength: int64(len(payload)), Header: h})
}

func TestHeaderChecksums(t *testing.T) {
	for _, kc := range knownChecksums {
		t.Run(kc.header, func(t *testing.T) {
			value := hexToBase64(t, kc.hexDigest)
			h := http.Header{}
			h.Set(kc.header, value)
			body, err := unsignedBody(t, []byte(kc.input), h)
			if err != nil {
				t.Fatal(err)
			}
			if name, v, ok := body.Checksum(); !ok || name != kc.header || v != value {
				t.Fatalf("Checksum() before reading = %q %q %v", name, v, ok)
			}
			if _, err := readBody(t, body, 3); err != nil {
				t.Fatalf("good checksum rejected: %v", err)
			}

			body, err = unsignedBody(t, []byte(kc.input+"!"), h)
			if err != nil {
				t.Fatal(err)
			}
			_, err = readBody(t, body, 3)
			alg, _ := checksumByHeader(kc.header)
			e := requireCode(t, err, s3err.BadDigest)
			if want := "The " + alg.name + " you specified did not match the calculated checksum."; e.Message != want {
				t.Fatalf("message %q, want %q", e.Message, want)
			}
		})
	}
}

func TestTrailerChecksums(t *testing.T) {
	for _, kc := range knownChecksums {
		t.Run(kc.header, func(t *testing.T) {
			value := hexToBase64(t, kc.hexDigest)
			for _, payload := range []string{kc.input, kc.input + "x"} {
				encoded := encodeStream([]byte(payload), streamOptions{chunkSize: minChunkSize, trailers: []string{kc.header + ":" + value}})
				h := streamingHeader(len(payload), kc.header)
				h.Set("X-Amz-Sdk-Checksum-Algorithm", strings.ToUpper(strings.TrimPrefix(kc.header, "x-amz-checksum-")))
				body, err := NewBody(bytes.NewReader(encoded), BodySpec{Mode: PayloadStreamingUnsignedTrailer, ContentLength: int64(len(encoded)), Header: h})
				if err != nil {
					t.Fatal(err)
				}
				_, err = readBody(t, body, 5)
				if payload == kc.input {
					if err != nil {
						t.Fatalf("good trailer rejected: %v", err)
					}
					if name, v, ok := body.Checksum(); !ok || name != kc.header || v != value {
						t.Fatalf("Checksum() = %q %q %v", name, v, ok)
					}
				} else {
					requireCode(t, err, s3err.BadDigest)
				}
			}
		})
	}
}

func TestContentMD5(t *testing.T) {
	payload := []byte("hello world")
	sum := md5.Sum(payload)
	good := base64.StdEncoding.EncodeToString(sum[:])
	if hex.EncodeToString(sum[:]) != "5eb63bbbe01eeed093cb22bb8f5acdc3" {
		t.Fatal("md5 of hello world")
	}

	h := http.Header{"Content-Md5": {good}}
	body, err := unsignedBody(t, payload, h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readBody(t, body, 4); err != nil {
		t.Fatalf("good Content-MD5 rejected: %v", err)
	}

	body, err = unsignedBody(t, []byte("hello worlD"), h)
	if err != nil {
		t.Fatal(err)
	}
	_, err = readBody(t, body, 4)
	e := requireCode(t, err, s3err.BadDigest)
	if e.Message != "The Content-MD5 you specified did not match what we received." {
		t.Fatalf("message %q", e.Message)
	}

	for _, bad := range []string{"not base64!", base64.StdEncoding.EncodeToString([]byte("short")), good + "AA=="} {
		_, err := unsignedBody(t, payload, http.Header{"Content-Md5": {bad}})
		requireCode(t, err, s3err.InvalidDigest)
	}
}

func TestChecksumHeaderProblems(t *testing.T) {
	crc := crc32Base64([]byte("x"))
	cases := []struct {
		name    string
		mode    PayloadMode
		header  http.Header
		code    s3err.Code
		message string
	}{
		{"malformed value", PayloadUnsigned, http.Header{"X-Amz-Checksum-Crc32": {"AAAA"}}, s3err.InvalidRequest,
			"Value for x-amz-checksum-crc32 header is invalid."},
		{"not base64", PayloadUnsigned, http.Header{"X-Amz-Checksum-Sha256": {"%%%"}}, s3err.InvalidRequest,
			"Value for x-amz-checksum-sha256 header is invalid."},
		{"two algorithms", PayloadUnsigned, http.Header{"X-Amz-Checksum-Crc32": {crc}, "X-Amz-Checksum-Crc32c": {crc}}, s3err.InvalidRequest,
			"Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed."},
		// The count is checked before the values: a crc32 that does not
		// decode still counts as one of two checksum headers.
		{"two algorithms, one malformed", PayloadUnsigned, http.Header{"X-Amz-Checksum-Crc32": {"AAAA"}, "X-Amz-Checksum-Crc32c": {crc}}, s3err.InvalidRequest,
			"Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed."},
		{"header and trailer", PayloadStreamingUnsignedTrailer, http.Header{"X-Amz-Checksum-Crc32": {crc}, "X-Amz-Trailer": {"x-amz-checksum-crc32c"}, "X-Amz-Decoded-Content-Length": {"1"}},
			s3err.InvalidRequest, "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed."},
		{"unsupported trailer", PayloadStreamingUnsignedTrailer, http.Header{"X-Amz-Trailer": {"x-amz-meta-foo"}, "X-Amz-Decoded-Content-Length": {"1"}},
			s3err.InvalidRequest, "The value specified in the x-amz-trailer header is not supported"},
		{"two trailers", PayloadStreamingUnsignedTrailer, http.Header{"X-Amz-Trailer": {"x-amz-checksum-crc32,x-amz-checksum-sha1"}, "X-Amz-Decoded-Content-Length": {"1"}},
			s3err.InvalidRequest, "The value specified in the x-amz-trailer header is not supported"},
		{"trailer without trailer mode", PayloadUnsigned, http.Header{"X-Amz-Trailer": {"x-amz-checksum-crc32"}},
			s3err.InvalidRequest, "The value specified in the x-amz-trailer header is not supported"},
		{"sdk algorithm unknown", PayloadUnsigned, http.Header{"X-Amz-Checksum-Crc32": {crc}, "X-Amz-Sdk-Checksum-Algorithm": {"MD4"}},
			s3err.InvalidRequest, "Value for x-amz-sdk-checksum-algorithm header is invalid."},
		{"sdk algorithm differs", PayloadUnsigned, http.Header{"X-Amz-Checksum-Crc32": {crc}, "X-Amz-Sdk-Checksum-Algorithm": {"SHA256"}},
			s3err.InvalidRequest, "Value for x-amz-sdk-checksum-algorithm header is invalid."},
		{"sdk algorithm without checksum", PayloadUnsigned, http.Header{"X-Amz-Sdk-Checksum-Algorithm": {"CRC32"}},
			s3err.InvalidRequest, "x-amz-sdk-checksum-algorithm specified, but no corresponding x-amz-checksum-* or x-amz-trailer headers were found."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewBody(strings.NewReader("x"), BodySpec{Mode: tc.mode, ContentLength: 1, Header: tc.header})
			e := requireCode(t, err, tc.code)
			if e.Message != tc.message {
				t.Fatalf("message %q, want %q", e.Message, tc.message)
			}
		})
	}
}

func TestUnknownChecksumHeadersAreIgnored(t *testing.T) {
	// x-amz-checksum-type and -algorithm describe multipart uploads, not a value to verify.
	h := http.Header{"X-Amz-Checksum-Type": {"FULL_OBJECT"}, "X-Amz-Checksum-Algorithm": {"CRC32"}}
	body, err := unsignedBody(t, []byte("abc"), h)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := body.Checksum(); ok {
		t.Fatal("Checksum() reported a checksum that was not sent")
	}
	if _, err := readBody(t, body, 8); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkChecksums(b *testing.B) {
	data := bytes.Repeat([]byte{0x5a}, 64<<10)
	for i := range checksumAlgorithms {
		alg := &checksumAlgorithms[i]
		b.Run(alg.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			h := alg.newHash()
			for b.Loop() {
				h.Reset()
				h.Write(data)
				h.Sum(nil)
			}
		})
	}
	b.Run("MD5", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		h := md5.New()
		for b.Loop() {
			h.Reset()
			h.Write(data)
			h.Sum(nil)
		}
	})
}

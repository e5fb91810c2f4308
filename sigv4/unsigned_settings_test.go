package sigv4

import (
	"strings"
	"testing"
	"time"

	"github.com/s3cond/s3cond/s3err"
)

// Only a checksum value may be added unsigned: the x-amz-checksum-* headers
// that choose what the store does (issue 23: an unsigned
// x-amz-checksum-algorithm on a presigned CreateMultipartUpload changed the
// upload's algorithm) must be signed, and S3's answer is 403 AccessDenied
// naming them in HeadersNotSigned.
func TestUnsignedChecksumSettingsAreRefused(t *testing.T) {
	for _, c := range []struct {
		header, value string
		refuse        bool
	}{
		{"X-Amz-Checksum-Algorithm", "SHA256", true},
		{"X-Amz-Checksum-Type", "FULL_OBJECT", true},
		{"X-Amz-Checksum-Mode", "ENABLED", true},
		{"X-Amz-Checksum-Anything", "x", true},
		{"X-Amz-Checksum-Sha256", "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", false},
		{"X-Amz-Checksum-Crc64nvme", "AAAAAAAAAAA=", false},
	} {
		for _, presigned := range []bool{false, true} {
			r := signedRequest(t, "POST", "/bucket/key?uploads", "", signOptions{payloadHash: EmptyPayloadHash})
			if presigned {
				r = presignedRequest(t, "POST", "/bucket/key?uploads", time.Hour, signOptions{})
			}
			r.Header.Set(c.header, c.value)
			_, err := testVerifier().Verify(r)
			refused := s3err.Is(err, s3err.AccessDenied)
			if refused != c.refuse {
				t.Errorf("%s added unsigned (presigned %v): err %v, want refused=%v", c.header, presigned, err, c.refuse)
				continue
			}
			if refused && !strings.Contains(string(s3err.As(err).XML("/", "R")), "<HeadersNotSigned>"+strings.ToLower(c.header)+"</HeadersNotSigned>") {
				t.Errorf("%s: HeadersNotSigned does not name it: %s", c.header, s3err.As(err).XML("/", "R"))
			}
		}
	}
}

package postform

import (
	"net/http"
	"strings"

	"github.com/s3cond/s3cond/internal/s3xml"
	"github.com/s3cond/s3cond/s3err"
)

// postHeaderFields are the form fields that become PutObject request
// headers, as S3 reads them from a POST form. Nothing else of the form
// reaches the store: not the authentication fields, not a copy source or a
// condition header a form might carry.
var postHeaderFields = newParameterSet(
	"cache-control", "content-type", "content-disposition", "content-encoding", "content-language",
	"expires", "content-md5",
	"x-amz-storage-class", "x-amz-website-redirect-location",
	"x-amz-server-side-encryption", "x-amz-server-side-encryption-aws-kms-key-id",
	"x-amz-server-side-encryption-context", "x-amz-server-side-encryption-bucket-key-enabled",
	"x-amz-server-side-encryption-customer-algorithm", "x-amz-server-side-encryption-customer-key",
	"x-amz-server-side-encryption-customer-key-md5",
	"x-amz-object-lock-mode", "x-amz-object-lock-retain-until-date", "x-amz-object-lock-legal-hold",
	"x-amz-checksum-algorithm", "x-amz-checksum-crc32", "x-amz-checksum-crc32c", "x-amz-checksum-crc64nvme",
	"x-amz-checksum-sha1", "x-amz-checksum-sha256", "x-amz-checksum-sha512", "x-amz-checksum-md5",
	"x-amz-checksum-xxhash64", "x-amz-checksum-xxhash3", "x-amz-checksum-xxhash128",
)

// PutHeader builds the PutObject header a POST form asks for: the
// fields of postHeaderFields, user metadata, the canned ACL and the tag set.
func PutHeader(fields map[string]string) (http.Header, error) {
	h := http.Header{}
	for name, value := range fields {
		var header string
		switch {
		case postHeaderFields[name] || strings.HasPrefix(name, "x-amz-meta-"):
			header = name
		case strings.HasPrefix(name, "x-amz-checksum-"):
			// A checksum the form asks for that s3cond cannot verify is
			// refused, not dropped: the upload would go unchecked.
			return nil, s3err.Newf(s3err.InvalidRequest, "The algorithm type you specified in x-amz-checksum- header is invalid.")
		case name == "acl":
			header = "x-amz-acl"
		case name == "tagging":
			tags, err := s3xml.ParseTagging(strings.NewReader(value), 0)
			if err != nil {
				return nil, err
			}
			header, value = "x-amz-tagging", tags
		default:
			continue
		}
		if !validHeaderName(header) || !validHeaderValue(value) {
			return nil, s3err.Newf(s3err.InvalidArgument, "The form field %q cannot be sent as a header.", name).
				With("ArgumentName", name)
		}
		if name == "x-amz-checksum-algorithm" {
			// PutObject names the algorithm in x-amz-sdk-checksum-algorithm.
			header = "x-amz-sdk-checksum-algorithm"
		}
		h.Set(header, value)
	}
	return h, nil
}

// validHeaderName reports whether name is an HTTP token (RFC 9110 §5.6.2).
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return true
}

// validHeaderValue refuses control characters (a CR or LF would split the
// header); tabs and bytes from 0x80 up are field content.
func validHeaderValue(value string) bool {
	for i := 0; i < len(value); i++ {
		if c := value[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

func newParameterSet(names ...string) map[string]bool {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	return set
}

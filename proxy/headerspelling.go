package proxy

import "strings"

// Response header names go to clients spelled as Amazon S3 spells them.
//
// Go's HTTP client (and http.ReadResponse on the splice path) hands s3cond
// the backend's header under canonical keys ("X-Amz-Meta-Foo"), and
// net/http's server writes a key exactly as it is stored in the map. S3
// sends every x-amz-* name in lower case, and clients rely on it: boto3
// reports the user metadata key as the part of the header name after
// "x-amz-meta-", with the case it arrived in, so {"foo": "bar"} stored came
// back as {"Foo": "bar"}. S3 spells ETag with a capital T. The other
// standard names (Content-Type, Last-Modified, ...) are spelled by S3
// exactly as Go canonicalises them.

// amzResponseNames maps the canonical form of the x-amz-* response headers
// S3 sends on most responses to their lower-case form, so that writing them
// allocates nothing; any other x-amz-* name (user metadata above all) is
// lowered on the fly.
var amzResponseNames = func() map[string]string {
	names := []string{
		"x-amz-id-2", "x-amz-version-id", "x-amz-delete-marker", "x-amz-storage-class",
		"x-amz-checksum-type", "x-amz-checksum-crc32", "x-amz-checksum-crc32c", "x-amz-checksum-crc64nvme",
		"x-amz-checksum-sha1", "x-amz-checksum-sha256", "x-amz-checksum-md5", "x-amz-checksum-sha512",
		"x-amz-checksum-xxhash64", "x-amz-checksum-xxhash3", "x-amz-checksum-xxhash128",
		"x-amz-server-side-encryption", "x-amz-server-side-encryption-aws-kms-key-id",
		"x-amz-server-side-encryption-bucket-key-enabled", "x-amz-server-side-encryption-customer-algorithm",
		"x-amz-server-side-encryption-customer-key-md5", "x-amz-expiration", "x-amz-restore",
		"x-amz-mp-parts-count", "x-amz-tagging-count", "x-amz-missing-meta", "x-amz-website-redirect-location",
		"x-amz-replication-status", "x-amz-object-lock-mode", "x-amz-object-lock-retain-until-date",
		"x-amz-object-lock-legal-hold", "x-amz-bucket-region", "x-amz-copy-source-version-id",
		"x-amz-abort-date", "x-amz-abort-rule-id", "x-amz-request-charged", "x-amz-access-point-alias",
		"x-amz-bucket-location-name", "x-amz-bucket-location-type", "x-amz-object-size",
	}
	m := make(map[string]string, len(names))
	for _, n := range names {
		m[canonicalASCII(n)] = n
	}
	return m
}()

// canonicalASCII is textproto.CanonicalMIMEHeaderKey for the plain ASCII
// names of the table above (kept local so the table needs no import).
func canonicalASCII(s string) string {
	b := []byte(s)
	upper := true
	for i, c := range b {
		if upper && 'a' <= c && c <= 'z' {
			b[i] = c - ('a' - 'A')
		}
		upper = c == '-'
	}
	return string(b)
}

// s3ResponseName is the name under which a backend response header (by its
// canonical key) is written to the client.
func s3ResponseName(canonical string) string {
	if len(canonical) > len("X-Amz-") && canonical[:len("X-Amz-")] == "X-Amz-" {
		if lower, ok := amzResponseNames[canonical]; ok {
			return lower
		}
		return strings.ToLower(canonical)
	}
	if canonical == "Etag" {
		return "ETag"
	}
	return canonical
}

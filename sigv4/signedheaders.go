package sigv4

import (
	"net/http"
	"sort"
	"strings"

	"github.com/s3cond/s3cond/s3err"
)

// What a signature must cover: Host, and every x-amz-* header the request
// carries (but the few S3 itself leaves unsigned).

// requireSignedHost rejects signatures that do not cover Host: without it a
// signed request could be replayed against any other endpoint. S3 answers
// this with 403 AccessDenied naming the unsigned header.
func requireSignedHost(fields authFields) *s3err.Error {
	for name := range fields.names() {
		if name == "host" {
			return nil
		}
	}
	return s3err.Newf(s3err.AccessDenied, "There were headers present in the request which were not signed").
		With("HeadersNotSigned", "host")
}

// requireSignedAmzHeaders refuses x-amz-* headers the signature does not
// cover, as S3 does: forwarded unsigned, anyone on the path could add
// metadata, an ACL, or a copy source that turns a PUT into a copy. Exempt
// are headers that cannot widen what the request does: the payload hash
// (the canonical request's last line carries its value), checksum values
// x-amz-checksum-<algorithm> (they only add checks; the settings beside
// them, such as x-amz-checksum-algorithm, are not exempt), the SDK's user agent, and a session token (s3cond's keys
// have none, and it is never forwarded).
func requireSignedAmzHeaders(h http.Header, fields authFields) *s3err.Error {
	var unsigned []string
	for name := range h {
		if !hasPrefixFold(name, "x-amz-") || fields.signs(name) || unsignedAmzHeaderAllowed(name) {
			continue
		}
		unsigned = append(unsigned, strings.ToLower(name))
	}
	if len(unsigned) == 0 {
		return nil
	}
	sort.Strings(unsigned)
	return s3err.Newf(s3err.AccessDenied, "There were headers present in the request which were not signed").
		With("HeadersNotSigned", strings.Join(unsigned, ", "))
}

// unsignedAmzHeaderAllowed reports whether an x-amz-* header (any case)
// may go unsigned. It runs on every header of every request, so it compares
// without lower-casing, which would allocate.
func unsignedAmzHeaderAllowed(name string) bool {
	switch {
	case strings.EqualFold(name, headerContentSHA256Lower), strings.EqualFold(name, "x-amz-user-agent"),
		strings.EqualFold(name, "x-amz-sdk-checksum-algorithm"), strings.EqualFold(name, "x-amz-security-token"):
		return true
	case hasPrefixFold(name, "x-amz-checksum-"):
		// Only a value of a known algorithm is a check. The other
		// x-amz-checksum-* headers are settings that change what the store
		// does (x-amz-checksum-algorithm and -type choose a multipart
		// upload's checksum, -mode what a read returns): they must be signed.
		_, isValue := checksumByHeader(name)
		return isValue
	}
	return false
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

const headerContentSHA256Lower = "x-amz-content-sha256"

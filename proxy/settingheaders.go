package proxy

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/s3cond/s3cond/s3err"
)

// The value allow-list for the request headers that change what the store
// does: conditions, storage settings, encryption, object lock, ACLs,
// owners, tags, redirects and the object's own headers. Each is checked in
// admit, before any lease or backend call, and sent on as rebuilt from its
// parsed value (headergrammar.go's checkHeaders). x-amz-grant-*,
// x-amz-checksum-* and the POST form are checked elsewhere.

// maxHeaderTextBytes bounds an object header the store keeps and serves
// back (Content-Type, Cache-Control, ...).
const maxHeaderTextBytes = 8 << 10

// settingHeaderGrammars are the rows; keys are canonical header keys.
var settingHeaderGrammars = []headerGrammar{
	{"If-Match", "If-Match", etagList},
	{"If-None-Match", "If-None-Match", etagList},
	{"If-Modified-Since", "If-Modified-Since", httpDate},
	{"If-Unmodified-Since", "If-Unmodified-Since", httpDate},
	{"x-amz-copy-source-if-match", "X-Amz-Copy-Source-If-Match", etagList},
	{"x-amz-copy-source-if-none-match", "X-Amz-Copy-Source-If-None-Match", etagList},
	{"x-amz-copy-source-if-modified-since", "X-Amz-Copy-Source-If-Modified-Since", httpDate},
	{"x-amz-copy-source-if-unmodified-since", "X-Amz-Copy-Source-If-Unmodified-Since", httpDate},
	{"x-amz-tagging", "X-Amz-Tagging", parseTagging},
	{"x-amz-website-redirect-location", "X-Amz-Website-Redirect-Location", redirectLocation},
	{"x-amz-storage-class", "X-Amz-Storage-Class", storageClass},
	{"x-amz-server-side-encryption", "X-Amz-Server-Side-Encryption", enumHeader(encryptionRefused, "AES256", "aws:kms", "aws:kms:dsse")},
	{"x-amz-server-side-encryption-customer-algorithm", "X-Amz-Server-Side-Encryption-Customer-Algorithm", enumHeader(encryptionRefused, "AES256")},
	{"x-amz-server-side-encryption-customer-key", "X-Amz-Server-Side-Encryption-Customer-Key", base64Bytes(32)},
	{"x-amz-server-side-encryption-customer-key-MD5", "X-Amz-Server-Side-Encryption-Customer-Key-Md5", base64Bytes(16)},
	{"x-amz-copy-source-server-side-encryption-customer-algorithm", "X-Amz-Copy-Source-Server-Side-Encryption-Customer-Algorithm", enumHeader(encryptionRefused, "AES256")},
	{"x-amz-copy-source-server-side-encryption-customer-key", "X-Amz-Copy-Source-Server-Side-Encryption-Customer-Key", base64Bytes(32)},
	{"x-amz-copy-source-server-side-encryption-customer-key-MD5", "X-Amz-Copy-Source-Server-Side-Encryption-Customer-Key-Md5", base64Bytes(16)},
	{"x-amz-server-side-encryption-aws-kms-key-id", "X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id", kmsKeyID},
	{"x-amz-server-side-encryption-context", "X-Amz-Server-Side-Encryption-Context", base64Text},
	{"x-amz-server-side-encryption-bucket-key-enabled", "X-Amz-Server-Side-Encryption-Bucket-Key-Enabled", booleanHeader},
	{"x-amz-object-lock-mode", "X-Amz-Object-Lock-Mode", enumHeader(nil, "GOVERNANCE", "COMPLIANCE")},
	{"x-amz-object-lock-retain-until-date", "X-Amz-Object-Lock-Retain-Until-Date", retainUntilDate},
	{"x-amz-object-lock-legal-hold", "X-Amz-Object-Lock-Legal-Hold", enumHeader(nil, "ON", "OFF")},
	{"x-amz-bucket-object-lock-enabled", "X-Amz-Bucket-Object-Lock-Enabled", booleanHeader},
	{"x-amz-metadata-directive", "X-Amz-Metadata-Directive", enumHeader(nil, "COPY", "REPLACE")},
	{"x-amz-tagging-directive", "X-Amz-Tagging-Directive", enumHeader(nil, "COPY", "REPLACE")},
	{"x-amz-acl", "X-Amz-Acl", enumHeader(nil, "private", "public-read", "public-read-write", "authenticated-read",
		"aws-exec-read", "bucket-owner-read", "bucket-owner-full-control", "log-delivery-write")},
	{"x-amz-expected-bucket-owner", "X-Amz-Expected-Bucket-Owner", accountID},
	{"x-amz-source-expected-bucket-owner", "X-Amz-Source-Expected-Bucket-Owner", accountID},
	{"x-amz-request-payer", "X-Amz-Request-Payer", enumHeader(nil, "requester")},
	{"x-amz-mfa", "X-Amz-Mfa", mfaValue},
	{"x-amz-bypass-governance-retention", "X-Amz-Bypass-Governance-Retention", droppedBoolean},
	{"Content-MD5", "Content-Md5", base64Bytes(16)},
	{"Content-Type", "Content-Type", headerText},
	{"Content-Language", "Content-Language", headerText},
	{"Cache-Control", "Cache-Control", headerText},
	{"Content-Disposition", "Content-Disposition", headerText},
	{"Expires", "Expires", headerText},
}

// etagList is an If-Match-like list: "*" or entity tags ("x", W/"x", or a
// bare x, which S3 takes too), each of printable ASCII without a quote,
// sent on as ", "-joined.
func etagList(v string) (string, *s3err.Error) {
	bad := s3err.Newf(s3err.InvalidArgument, "The entity tag list is not valid")
	items := strings.Split(v, ",")
	if len(v) > maxHeaderLikeBytes || len(items) > 100 {
		return "", bad
	}
	out := make([]string, 0, len(items))
	for _, item := range items {
		item = strings.TrimSpace(item)
		tag := strings.TrimPrefix(item, "W/")
		if len(tag) >= 2 && tag[0] == '"' && tag[len(tag)-1] == '"' {
			tag = tag[1 : len(tag)-1]
		}
		if tag == "" || strings.ContainsAny(tag, "\", ") || hasControlByte(tag) || !isASCII(tag) {
			return "", bad
		}
		out = append(out, item)
	}
	return strings.Join(out, ", "), nil
}

// httpDate is an HTTP date, sent on in its one canonical form. S3 ignores
// a conditional date it cannot read, as HTTP says; it is then not sent on
// at all ("" drops the header).
func httpDate(v string) (string, *s3err.Error) {
	t, err := http.ParseTime(v)
	if err != nil {
		return "", nil
	}
	return t.UTC().Format(http.TimeFormat), nil
}

// S3's limits on object tags.
const (
	maxObjectTags   = 10
	maxTagKeyRunes  = 128
	maxTagValueRune = 256
)

// parseTagging reads x-amz-tagging, URL-encoded key=value pairs, with S3's
// limits and character set (letters, digits, spaces, + - = . _ : / @), and
// sends the pairs on re-encoded in the order given. Empty pairs ("&&",
// a trailing "&") are skipped, as S3 skips them: "&" is no tag at all.
func parseTagging(v string) (string, *s3err.Error) {
	if v == "" {
		return "", s3err.Newf(s3err.InvalidTag, "The TagKey you have provided is invalid")
	}
	pairs := strings.Split(v, "&")
	if countTagPairs(pairs) > maxObjectTags {
		return "", s3err.Newf(s3err.BadRequest, "Object tags cannot be greater than %d", maxObjectTags)
	}
	seen := make(map[string]bool, len(pairs))
	var out strings.Builder
	for _, pair := range pairs {
		if pair == "" {
			continue
		}
		rawKey, rawValue, _ := strings.Cut(pair, "=")
		key, errKey := url.QueryUnescape(rawKey)
		value, errValue := url.QueryUnescape(rawValue)
		switch {
		case errKey != nil || errValue != nil || seen[key] || pair == "=":
			return "", s3err.Newf(s3err.InvalidArgument, "The header 'x-amz-tagging' shall be encoded as UTF-8 then URLEncoded URL query parameters without tag name duplicates.")
		case key == "" || !tagText(key) || utf8.RuneCountInString(key) > maxTagKeyRunes:
			return "", s3err.Newf(s3err.InvalidTag, "The TagKey you have provided is invalid")
		case !tagText(value) || utf8.RuneCountInString(value) > maxTagValueRune:
			return "", s3err.Newf(s3err.InvalidTag, "The TagValue you have provided is invalid")
		}
		seen[key] = true
		if out.Len() > 0 {
			out.WriteByte('&')
		}
		out.WriteString(strictEscape(key) + "=" + strictEscape(value))
	}
	return out.String(), nil
}

func isLetterOrDigit(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// tagText is S3's tag character set: Unicode letters and digits, spaces,
// and + - = . _ : / @.
func tagText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !(isLetterOrDigit(r) || r == ' ' || strings.ContainsRune("+-=._:/@", r)) {
			return false
		}
	}
	return true
}

// redirectLocation is S3's website redirect: a path from the root or an
// http(s) URL, at most 2 KiB, of printable ASCII. S3 refuses another with
// 400 InvalidRedirectLocation (aws/aws-cli#1130 shows its answer).
func redirectLocation(v string) (string, *s3err.Error) {
	ok := (strings.HasPrefix(v, "/") || strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://")) &&
		len(v) <= 2048 && isASCII(v) && !hasControlByte(v) && !strings.ContainsAny(v, "\\ ")
	if !ok {
		return "", s3err.New(s3err.InvalidRedirectLocation)
	}
	return v, nil
}

// storageClass is S3's storage class enum.
func storageClass(v string) (string, *s3err.Error) {
	switch v {
	case "STANDARD", "REDUCED_REDUNDANCY", "STANDARD_IA", "ONEZONE_IA", "INTELLIGENT_TIERING", "GLACIER",
		"DEEP_ARCHIVE", "OUTPOSTS", "GLACIER_IR", "SNOW", "EXPRESS_ONEZONE", "FSX_OPENZFS":
		return v, nil
	}
	return "", s3err.New(s3err.InvalidStorageClass)
}

func encryptionRefused() *s3err.Error {
	return s3err.Newf(s3err.InvalidArgument, "The encryption method specified is not supported")
}

// enumHeader is one of values, exactly; refused gives S3's error (nil:
// InvalidArgument naming the header).
func enumHeader(refused func() *s3err.Error, values ...string) func(string) (string, *s3err.Error) {
	return func(v string) (string, *s3err.Error) {
		for _, allowed := range values {
			if v == allowed {
				return v, nil
			}
		}
		if refused != nil {
			return "", refused()
		}
		return "", s3err.Newf(s3err.InvalidArgument, "The header's value is not one of %s", strings.Join(values, ", "))
	}
}

// booleanHeader is a boolean as S3 reads it: "true" or "false" in any
// case, sent on as "true" or "false". botocore before 1.31 writes a
// boolean header with Python's str() ("True"), which S3 accepts; Debian
// bookworm's python3-boto3 still does.
func booleanHeader(v string) (string, *s3err.Error) {
	switch {
	case strings.EqualFold(v, "true"):
		return "true", nil
	case strings.EqualFold(v, "false"):
		return "false", nil
	}
	return "", s3err.Newf(s3err.InvalidArgument, "The header's value is not a boolean (true or false)")
}

// base64Bytes is the standard base64 of exactly size bytes (keys, MD5s).
func base64Bytes(size int) func(string) (string, *s3err.Error) {
	return func(v string) (string, *s3err.Error) {
		raw, err := base64.StdEncoding.Strict().DecodeString(v)
		if err != nil || len(raw) != size {
			if size == 16 && v != "" {
				return "", s3err.New(s3err.InvalidDigest)
			}
			return "", s3err.Newf(s3err.InvalidArgument, "The header's value must be the base64 of %d bytes", size)
		}
		return base64.StdEncoding.EncodeToString(raw), nil
	}
}

// base64Text is any standard base64 value (an encryption context).
func base64Text(v string) (string, *s3err.Error) {
	raw, err := base64.StdEncoding.Strict().DecodeString(v)
	if err != nil || len(v) > maxHeaderLikeBytes {
		return "", s3err.Newf(s3err.InvalidArgument, "The header's value must be base64")
	}
	return base64.StdEncoding.EncodeToString(raw), nil
}

// kmsKeyID is a key ID, alias or ARN: [A-Za-z0-9:/_-], at most 2 KiB.
func kmsKeyID(v string) (string, *s3err.Error) {
	if v == "" || len(v) > 2048 || !isASCII(v) || strings.Contains(v, "..") || strings.ContainsFunc(v, func(r rune) bool {
		return !(isLetterOrDigit(r) || strings.ContainsRune(":/_-", r))
	}) {
		return "", s3err.Newf(s3err.InvalidArgument, "Invalid KMS key ID")
	}
	return v, nil
}

// retainUntilDate is an RFC 3339 time, sent on in UTC.
func retainUntilDate(v string) (string, *s3err.Error) {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return "", s3err.Newf(s3err.InvalidArgument, "The retain until date must be provided in ISO 8601 format")
	}
	return t.UTC().Format(time.RFC3339Nano), nil
}

// accountID is an AWS account: 12 digits.
func accountID(v string) (string, *s3err.Error) {
	if len(v) != 12 || strings.ContainsFunc(v, func(r rune) bool { return r < '0' || r > '9' }) {
		return "", s3err.Newf(s3err.InvalidArgument, "The expected bucket owner must be a 12-digit AWS account ID")
	}
	return v, nil
}

// mfaValue is "<device serial> <code>": the serial an ARN or serial of
// [A-Za-z0-9:/_+=.@-], the code 6 digits.
func mfaValue(v string) (string, *s3err.Error) {
	serial, code, ok := strings.Cut(v, " ")
	bad := !ok || serial == "" || len(serial) > 256 || len(code) != 6 || !isASCII(serial) ||
		strings.ContainsFunc(code, func(r rune) bool { return r < '0' || r > '9' }) ||
		strings.ContainsFunc(serial, func(r rune) bool { return !(isLetterOrDigit(r) || strings.ContainsRune(":/_+=.@-", r)) })
	if bad {
		return "", s3err.Newf(s3err.InvalidArgument, "The x-amz-mfa value must be a device serial and a code")
	}
	return v, nil
}

// headerText is a header the store keeps and serves back: UTF-8, no
// control byte but tab, bounded.
func headerText(v string) (string, *s3err.Error) {
	if len(v) > maxHeaderTextBytes || !utf8.ValidString(v) || hasControlByte(strings.ReplaceAll(v, "\t", " ")) {
		return "", s3err.Newf(s3err.InvalidArgument, "The header's value holds bytes a header cannot carry")
	}
	return v, nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// maxUserMetadataBytes is S3's bound on x-amz-meta-* (names and values).
const maxUserMetadataBytes = 2 << 10

// checkObjectHeaders checks what has no fixed name: user metadata (UTF-8,
// no control byte but tab, S3's 2 KiB in total, MetadataTooLarge above)
// and Content-Encoding, which outboundHeader rewrites itself (it strips
// aws-chunked) and so is checked, not rebuilt, here. A metadata header
// given on several lines is one value, joined by commas, as S3 stores it;
// joined holds those values to send on (nil when there are none).
func checkObjectHeaders(h http.Header) (joined http.Header, err error) {
	total := 0
	for name, values := range h {
		if name == "Content-Encoding" {
			for _, v := range values {
				if _, err := headerText(v); err != nil {
					return nil, argumentError(err.Message, "Content-Encoding", v)
				}
			}
			continue
		}
		if !strings.HasPrefix(name, "X-Amz-Meta-") {
			continue
		}
		for _, v := range values {
			if _, err := headerText(v); err != nil {
				return nil, argumentError(err.Message, strings.ToLower(name), v)
			}
		}
		value := values[0]
		if len(values) > 1 {
			value = strings.Join(values, ",")
			if joined == nil {
				joined = http.Header{}
			}
			joined[name] = []string{value}
		}
		total += len(name) - len("X-Amz-Meta-") + len(value)
	}
	if total > maxUserMetadataBytes {
		return nil, s3err.New(s3err.MetadataTooLarge).With("Size", strconv.Itoa(total)).With("MaxSizeAllowed", strconv.Itoa(maxUserMetadataBytes))
	}
	return joined, nil
}

// droppedBoolean reads x-amz-bypass-governance-retention as S3 does and
// sends nothing on. S3 lets a delete pass a GOVERNANCE lock only for a
// principal granted s3:BypassGovernanceRetention, a right s3cond's grants
// cannot express: every key is a principal without it, for which the store
// keeps its locks. Refusing the header instead would fail clients that send
// it on every DeleteObjects (ceph s3-tests' clean-up).
func droppedBoolean(v string) (string, *s3err.Error) {
	if _, err := booleanHeader(v); err != nil {
		return "", err
	}
	return "", nil
}

// countTagPairs counts the pairs of x-amz-tagging that are not empty.
func countTagPairs(pairs []string) int {
	n := 0
	for _, pair := range pairs {
		if pair != "" {
			n++
		}
	}
	return n
}

package proxy

import (
	"crypto/md5"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/s3cond/s3cond/s3err"
)

// Issue 23: the headers that change what the store does are values too.
// Each refused one never reaches the store; each accepted one reaches it
// as s3cond rebuilt it.
func TestSettingHeaderGrammarAnswersAsS3(t *testing.T) {
	long := strings.Repeat("k", 129)
	for _, tc := range []struct {
		name, value string
		code        s3err.Code
	}{
		{"X-Amz-Copy-Source-If-Match", `"a"bc"`, s3err.InvalidArgument},
		{"X-Amz-Copy-Source-If-None-Match", `"a b"`, s3err.InvalidArgument},
		{"If-Match", "\"\u00e9\"", s3err.InvalidArgument},
		{"If-None-Match", `""`, s3err.InvalidArgument},
		{"X-Amz-Tagging", "a=1&a=2", s3err.InvalidArgument},
		{"X-Amz-Tagging", long + "=v", s3err.InvalidTag},
		{"X-Amz-Tagging", "k=" + strings.Repeat("v", 257), s3err.InvalidTag},
		{"X-Amz-Tagging", "k=..%5C..%5Cx", s3err.InvalidTag},
		{"X-Amz-Tagging", "k=%0Ax", s3err.InvalidTag},
		{"X-Amz-Tagging", "k=%zz", s3err.InvalidArgument},
		{"X-Amz-Tagging", "=v", s3err.InvalidTag},
		{"X-Amz-Tagging", "a&b&c&d&e&f&g&h&i&j&k", s3err.BadRequest},
		{"X-Amz-Website-Redirect-Location", "../../etc/passwd", s3err.InvalidRedirectLocation},
		{"X-Amz-Website-Redirect-Location", "javascript:alert(1)", s3err.InvalidRedirectLocation},
		{"X-Amz-Website-Redirect-Location", "/" + strings.Repeat("a", 2048), s3err.InvalidRedirectLocation},
		{"X-Amz-Storage-Class", "standard", s3err.InvalidStorageClass},
		{"X-Amz-Storage-Class", "../x", s3err.InvalidStorageClass},
		{"X-Amz-Server-Side-Encryption", "AES257", s3err.InvalidArgument},
		{"X-Amz-Server-Side-Encryption-Customer-Algorithm", "DES", s3err.InvalidArgument},
		{"X-Amz-Server-Side-Encryption-Customer-Key", base64.StdEncoding.EncodeToString(make([]byte, 31)), s3err.InvalidArgument},
		{"X-Amz-Server-Side-Encryption-Customer-Key-Md5", "AAAA", s3err.InvalidDigest},
		{"X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id", "../../key", s3err.InvalidArgument},
		{"X-Amz-Server-Side-Encryption-Context", "not base64!", s3err.InvalidArgument},
		{"X-Amz-Object-Lock-Mode", "governance", s3err.InvalidArgument},
		{"X-Amz-Object-Lock-Retain-Until-Date", "tomorrow", s3err.InvalidArgument},
		{"X-Amz-Object-Lock-Legal-Hold", "on", s3err.InvalidArgument},
		{"X-Amz-Metadata-Directive", "MOVE", s3err.InvalidArgument},
		{"X-Amz-Tagging-Directive", "copy", s3err.InvalidArgument},
		{"X-Amz-Acl", "public-write", s3err.InvalidArgument},
		{"X-Amz-Expected-Bucket-Owner", "12345678901", s3err.InvalidArgument},
		{"X-Amz-Source-Expected-Bucket-Owner", "../123456789", s3err.InvalidArgument},
		{"X-Amz-Request-Payer", "everyone", s3err.InvalidArgument},
		{"X-Amz-Mfa", "serial 12345", s3err.InvalidArgument},
		{"X-Amz-Bypass-Governance-Retention", "yes", s3err.InvalidArgument},
		{"X-Amz-Bucket-Object-Lock-Enabled", "1", s3err.InvalidArgument},
		{"X-Amz-Server-Side-Encryption-Bucket-Key-Enabled", "true ", s3err.InvalidArgument},
		{"Content-Md5", "AAAA", s3err.InvalidDigest},
		{"Content-Type", "text/plain\x01", s3err.InvalidArgument},
		{"Cache-Control", "\xff\xfe", s3err.InvalidArgument},
		{"X-Amz-Meta-A", "x\x7f", s3err.InvalidArgument},
		{"X-Amz-Meta-Big", strings.Repeat("m", 2049), s3err.MetadataTooLarge},
	} {
		_, err := checkHeaders(http.Header{tc.name: {tc.value}})
		if e := s3err.As(err); err == nil || e.Code != tc.code {
			t.Errorf("%s: %q: %v, want %s", tc.name, tc.value, err, tc.code)
		}
	}
}

func TestSettingHeadersReachTheStoreAsChecked(t *testing.T) {
	v := newValueProbe(t, KeyPolicyStrict)
	sum := md5.Sum(nil)
	for _, tc := range []struct{ name, value, want string }{
		{"X-Amz-Tagging", "a+b=c%2Fd&e=", "a%20b=c%2Fd&e="},
		// S3 skips empty pairs (versitygw's full-flow PutObject_tagging,
		// written against S3): "&&&" is no tag at all, "key&" one tag.
		{"X-Amz-Tagging", "&&&", ""},
		{"X-Amz-Tagging", "&key&&k2=v&", "key=&k2=v"},
		{"X-Amz-Copy-Source-If-Match", `"a" ,W/"b",c`, `"a", W/"b", c`},
		{"If-Modified-Since", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT"},
		{"If-Unmodified-Since", "not a date", ""},
		{"X-Amz-Storage-Class", "STANDARD_IA", "STANDARD_IA"},
		{"Content-Md5", base64.StdEncoding.EncodeToString(sum[:]), base64.StdEncoding.EncodeToString(sum[:])},
		// Issue 32: botocore before 1.31 (Debian bookworm's python3-boto3)
		// sends boolean headers as Python writes them; S3 reads them.
		// Read as S3 reads it, then dropped: no key of s3cond's holds
		// s3:BypassGovernanceRetention (settingheaders.go).
		{"X-Amz-Bypass-Governance-Retention", "True", ""},
		{"X-Amz-Server-Side-Encryption-Bucket-Key-Enabled", "FALSE", "false"},
		{"X-Amz-Bucket-Object-Lock-Enabled", "tRuE", "true"},
	} {
		status, body := v.do(t, testKeyID, http.MethodPut, "/"+bucketName+"/k", http.Header{tc.name: {tc.value}}, nil)
		got := v.store.take()
		if status != http.StatusOK || len(got) != 1 {
			t.Fatalf("%s: %d %s, %d store requests", tc.name, status, body, len(got))
		}
		if sent := strings.Join(got[0].Header.Values(tc.name), ","); sent != tc.want {
			t.Errorf("%s: %q reached the store as %q, want %q", tc.name, tc.value, sent, tc.want)
		}
	}
	for _, h := range []http.Header{
		{"X-Amz-Storage-Class": {"NOPE"}}, {"X-Amz-Tagging": {"k=a%5Cb"}}, {"X-Amz-Website-Redirect-Location": {"x/../y"}},
	} {
		if status, _ := v.do(t, testKeyID, http.MethodPut, "/"+bucketName+"/k", h, nil); status != http.StatusBadRequest {
			t.Errorf("%v: %d, want 400", h, status)
		}
		if got := v.store.take(); len(got) != 0 {
			t.Errorf("%v reached the store", h)
		}
	}
}

func TestSettingHeaderGrammarAcceptsWhatClientsSend(t *testing.T) {
	for _, h := range []http.Header{
		{"If-None-Match": {"*"}}, {"If-Match": {`"d41d8cd98f00b204e9800998ecf8427e"`}},
		{"If-Match": {`"d41d8cd98f00b204e9800998ecf8427e-2"`, `W/"x"`}},
		{"X-Amz-Tagging": {"Project=Blue%20Sky&Owner=a%40b.c&Path=%2Fdata%2Fx:y"}},
		{"X-Amz-Website-Redirect-Location": {"https://example.com/a?b=c"}},
		{"X-Amz-Server-Side-Encryption": {"aws:kms"}, "X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id": {"arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"}},
		{"X-Amz-Server-Side-Encryption-Customer-Algorithm": {"AES256"}, "X-Amz-Server-Side-Encryption-Customer-Key": {base64.StdEncoding.EncodeToString(make([]byte, 32))},
			"X-Amz-Server-Side-Encryption-Customer-Key-Md5": {base64.StdEncoding.EncodeToString(make([]byte, 16))}},
		{"X-Amz-Object-Lock-Mode": {"GOVERNANCE"}, "X-Amz-Object-Lock-Retain-Until-Date": {"2030-01-01T00:00:00.000Z"}, "X-Amz-Object-Lock-Legal-Hold": {"ON"}},
		{"X-Amz-Metadata-Directive": {"REPLACE"}, "X-Amz-Tagging-Directive": {"COPY"}, "X-Amz-Acl": {"bucket-owner-full-control"}},
		{"X-Amz-Expected-Bucket-Owner": {"123456789012"}, "X-Amz-Request-Payer": {"requester"}, "X-Amz-Mfa": {"arn:aws:iam::123456789012:mfa/user 123456"}},
		{"Content-Type": {"text/plain; charset=utf-8"}, "Content-Disposition": {`attachment; filename="é.txt"`}, "X-Amz-Meta-Note": {"tab\tok"}},
	} {
		if _, err := checkHeaders(h); err != nil {
			t.Errorf("%v: %v", h, err)
		}
	}
}

// A user metadata header given on several lines is one value to S3, its
// lines joined by commas (versitygw full-flow's
// PutObject_should_combine_metadata); the store gets that one value.
func TestRepeatedMetadataHeaderIsJoinedAsS3Joins(t *testing.T) {
	v := newValueProbe(t, KeyPolicyStrict)
	h := http.Header{"X-Amz-Meta-Key": {"value-1", "value-2", "value-3"}}
	status, body := v.do(t, testKeyID, http.MethodPut, "/"+bucketName+"/k", h, nil)
	got := v.store.take()
	if status != http.StatusOK || len(got) != 1 {
		t.Fatalf("%d %s, %d store requests", status, body, len(got))
	}
	if sent := got[0].Header.Values("X-Amz-Meta-Key"); len(sent) != 1 || sent[0] != "value-1,value-2,value-3" {
		t.Fatalf("x-amz-meta-key reached the store as %q, want one value-1,value-2,value-3", sent)
	}
}

// A bare "=" pair is not the URL-encoded form S3 reads: 400
// InvalidArgument, as for a broken escape, not InvalidTag (versitygw
// full-flow's PutObject_tagging, written against S3; "=v" stays InvalidTag).
func TestTagPairWithoutKeyIsInvalidArgument(t *testing.T) {
	for _, v := range []string{"=", "k=v&="} {
		_, err := parseTagging(v)
		if err == nil || err.Code != s3err.InvalidArgument {
			t.Errorf("x-amz-tagging %q: %v, want InvalidArgument", v, err)
		}
	}
}

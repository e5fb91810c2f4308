package proxy

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Issue 32, finding 6: an x-amz-* query parameter (a presigned URL's hoisted
// header) was held only to "UTF-8 without control bytes", so values the
// header grammar refuses reached the store verbatim. Each gets its header's
// answer now, and nothing reaches the store.
func TestHoistedHeadersHaveTheirHeadersGrammar(t *testing.T) {
	v := newValueProbe(t, KeyPolicyStrict)
	for _, tc := range []struct{ name, value, code string }{
		{"x-amz-website-redirect-location", "javascript:alert(1)", "InvalidRedirectLocation"},
		{"x-amz-website-redirect-location", "../../etc/passwd", "InvalidRedirectLocation"},
		{"x-amz-server-side-encryption-aws-kms-key-id", "../../..", "InvalidArgument"},
		{"x-amz-storage-class", "BOGUS", "InvalidStorageClass"},
		{"X-Amz-Storage-Class", "../x", "InvalidStorageClass"},
		{"x-amz-server-side-encryption", "AES257", "InvalidArgument"},
		{"x-amz-server-side-encryption-customer-algorithm", "DES", "InvalidArgument"},
		{"x-amz-server-side-encryption-customer-key-MD5", "AAAA", "InvalidDigest"},
		{"x-amz-server-side-encryption-context", "not base64!", "InvalidArgument"},
		{"x-amz-object-lock-mode", "governance", "InvalidArgument"},
		{"x-amz-object-lock-retain-until-date", "tomorrow", "InvalidArgument"},
		{"x-amz-object-lock-legal-hold", "maybe", "InvalidArgument"},
		{"x-amz-acl", "public-write", "InvalidArgument"},
		{"x-amz-tagging", "k=..%5C..%5Cx", "InvalidTag"},
		{"x-amz-expected-bucket-owner", "../123456789", "InvalidArgument"},
		{"x-amz-request-payer", "everyone", "InvalidArgument"},
		{"x-amz-mfa", "serial 12345", "InvalidArgument"},
		{"x-amz-bypass-governance-retention", "yes", "InvalidArgument"},
		{"x-amz-metadata-directive", "MOVE", "InvalidArgument"},
		{"x-amz-meta-note", strings.Repeat("m", maxHeaderTextBytes+1), "InvalidArgument"},
	} {
		target := "/" + bucketName + "/k?" + url.QueryEscape(tc.name) + "=" + strictEscape(tc.value)
		status, body := v.do(t, testKeyID, http.MethodPut, target, nil, nil)
		if status != http.StatusBadRequest || !strings.Contains(body, "<Code>"+tc.code+"</Code>") {
			t.Errorf("%s=%q: %d %s, want 400 %s", tc.name, tc.value, status, body, tc.code)
		}
		if got := v.store.take(); len(got) != 0 {
			t.Errorf("%s=%q reached the store as %q", tc.name, tc.value, got[0].URL.RawQuery)
		}
	}
}

// An accepted hoisted header reaches the store as its header grammar
// rebuilds it.
func TestHoistedHeadersReachTheStoreRebuilt(t *testing.T) {
	v := newValueProbe(t, KeyPolicyStrict)
	// A store found to keep object lock (versitygw): elsewhere the lock
	// headers are 501 before any grammar matters (spec.md §7).
	v.proxy.backend.StoreKeeps = map[string]bool{KeepsObjectLock: true}
	for _, tc := range []struct{ name, value, want string }{
		{"x-amz-bypass-governance-retention", "True", ""}, // read, then dropped as its header is
		{"x-amz-object-lock-retain-until-date", "2030-01-02T03:04:05+02:00", "x-amz-object-lock-retain-until-date=2030-01-02T01%3A04%3A05Z"},
		{"x-amz-storage-class", "STANDARD_IA", "x-amz-storage-class=STANDARD_IA"},
		{"x-amz-tagging", "a+b=c", "x-amz-tagging=a%2520b%3Dc"},
		{"x-amz-unknown-setting", "anything", "x-amz-unknown-setting=anything"},
	} {
		target := "/" + bucketName + "/k?" + tc.name + "=" + strictEscape(tc.value)
		status, body := v.do(t, testKeyID, http.MethodPut, target, nil, nil)
		got := v.store.take()
		if status != http.StatusOK || len(got) != 1 {
			t.Fatalf("%s=%q: %d %s, %d store requests", tc.name, tc.value, status, body, len(got))
		}
		if got[0].URL.RawQuery != tc.want {
			t.Errorf("%s=%q reached the store as %q, want %q", tc.name, tc.value, got[0].URL.RawQuery, tc.want)
		}
	}
}

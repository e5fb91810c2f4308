package postform

import (
	"encoding/base64"
	"testing"
	"time"

	"github.com/s3cond/s3cond/s3err"
)

func encodePolicy(json string) string { return base64.StdEncoding.EncodeToString([]byte(json)) }

// The policy document on its own; policy_words_test.go checks CheckPolicy's
// answers in S3's words.
func TestPolicyCheck(t *testing.T) {
	doc, perr := ParsePolicy(encodePolicy(`{"expiration": "2030-01-02T03:04:05.000Z", "conditions": [
		{"bucket": "photos"}, ["starts-with", "$key", "uploads/"], ["content-length-range", 1, 100],
		["content-length-range", 10, 1000], {"Content-Type": "image/png"}]}`))
	if perr != nil {
		t.Fatal(perr)
	}
	if want := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC); !doc.Expiration().Equal(want) {
		t.Errorf("expiration %v, want %v", doc.Expiration(), want)
	}
	fields := func(more map[string]string) map[string]string {
		f := map[string]string{"key": "uploads/${filename}", "content-type": "image/png", FieldPolicy: "p", FieldSignature: "s", "x-ignore-note": "n"}
		for k, v := range more {
			f[k] = v
		}
		return f
	}
	length, perr := doc.Check(fields(nil), "photos", "uploads/a.png")
	if perr != nil || length == nil || length.Min != 10 || length.Max != 100 {
		t.Fatalf("Check: %+v, %v; want the ranges' intersection 10..100", length, perr)
	}
	for name, tc := range map[string]struct {
		fields      map[string]string
		bucket, key string
	}{
		"another bucket":                    {fields(nil), "other", "uploads/a.png"},
		"a bucket field naming another":     {fields(map[string]string{"bucket": "other"}), "photos", "uploads/a.png"},
		"a filename leaving the key prefix": {fields(nil), "photos", "elsewhere/a.png"},
		"a field no condition names":        {fields(map[string]string{"x-amz-meta-x": "1"}), "photos", "uploads/a.png"},
		"a condition that fails":            {fields(map[string]string{"content-type": "text/html"}), "photos", "uploads/a.png"},
	} {
		if _, perr := doc.Check(tc.fields, tc.bucket, tc.key); perr == nil || perr.Code != s3err.AccessDenied {
			t.Errorf("%s: %v, want AccessDenied", name, perr)
		}
	}
	if _, perr := ParsePolicy("not base64!"); perr == nil || perr.Code != s3err.InvalidPolicyDocument {
		t.Errorf("undecodable policy: %v, want InvalidPolicyDocument", perr)
	}
}

func TestPutHeader(t *testing.T) {
	h, err := PutHeader(map[string]string{
		"content-type": "image/png", "x-amz-meta-owner": "ann", "acl": "private", "key": "k", "policy": "p",
		"tagging":                  "<Tagging><TagSet><Tag><Key>a</Key><Value>1</Value></Tag></TagSet></Tagging>",
		"x-amz-checksum-algorithm": "CRC32", "x-amz-copy-source": "/other/k", "if-none-match": "*",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"Content-Type": "image/png", "X-Amz-Meta-Owner": "ann", "X-Amz-Acl": "private",
		"X-Amz-Tagging": "a=1", "X-Amz-Sdk-Checksum-Algorithm": "CRC32"}
	if len(h) != len(want) {
		t.Errorf("header %v, want only %v", h, want)
	}
	for name, v := range want {
		if h.Get(name) != v {
			t.Errorf("%s = %q, want %q", name, h.Get(name), v)
		}
	}
	for field, code := range map[string]s3err.Code{"tagging": s3err.MalformedXML, "x-amz-checksum-unknown": s3err.InvalidRequest, "x-amz-meta-a": s3err.InvalidArgument} {
		value := map[string]string{"tagging": "<Tagging>", "x-amz-checksum-unknown": "x", "x-amz-meta-a": "a\r\nb"}[field]
		if _, err := PutHeader(map[string]string{field: value}); !s3err.Is(err, code) {
			t.Errorf("%s: %v, want %s", field, err, code)
		}
	}
}

package proxy

import (
	"errors"
	"testing"

	"github.com/s3cond/s3cond/s3err"
)

// The cases of versitygw's CopyObject_invalid_copy_source that s3cond
// answers itself, with S3's words (versitygw copies them from S3).
func TestParseCopySourceErrorsAreS3s(t *testing.T) {
	for _, tc := range []struct {
		src, message, value string
	}{
		{"bucket/%ZZ", "Invalid copy source encoding", "bucket/%ZZ"},
		{"100%/foo/bar/baz", "Invalid copy source encoding", "100%/foo/bar/baz"},
		{"bucket/%A/bar", "Invalid copy source encoding", "bucket/%A/bar"},
		{"bucket/%G1/", "Invalid copy source encoding", "bucket/%G1/"},
		{"%", "Invalid copy source encoding", "%"},
		{"bucket/%1", "Invalid copy source encoding", "bucket/%1"},
		{"bucket/%C3%", "Invalid copy source encoding", "bucket/%C3%"},
		{"bucket/key?versionId=%Z", "Invalid copy source encoding", "bucket/key?versionId=%Z"},
		{"Copy-Source", "Invalid copy source object key", ""},
		{"//key", "Invalid copy source bucket name", "//key"},
		{"bucket", "Invalid copy source object key", ""},
		{"bucket/", "Invalid copy source object key", ""},
		{"/bucket/?versionId=1", "Invalid copy source object key", ""},
	} {
		_, err := parseCopySource(tc.src)
		var e *s3err.Error
		if !errors.As(err, &e) {
			t.Errorf("%q: %v, want an S3 error", tc.src, err)
			continue
		}
		if e.Code != s3err.InvalidArgument || e.Message != tc.message || errorField(e, "ArgumentName") != "x-amz-copy-source" ||
			errorField(e, "ArgumentValue") != tc.value {
			t.Errorf("%q: %s %q %v, want InvalidArgument %q with value %q", tc.src, e.Code, e.Message, e.Extra, tc.message, tc.value)
		}
	}
}

func TestParseCopySourceReadsBucketAndKey(t *testing.T) {
	for _, tc := range []struct{ src, bucket, key string }{
		{"bucket/key", "bucket", "key"},
		{"/bucket/dir/a%20b?versionId=3", "bucket", "dir/a b"},
		{"b%2Dx/k%2Fl", "b-x", "k/l"},
		{"bucket/a+b", "bucket", "a+b"},
		{"bucket/%3Fnot-question", "bucket", "?not-question"},
		{"bucket/a?b?versionId=1", "bucket", "a?b"},
		{"bucket/%20/__/_", "bucket", " /__/_"},
	} {
		src, err := parseCopySource(tc.src)
		if err != nil || src.bucket != tc.bucket || src.key != tc.key {
			t.Errorf("%q: %+v %v, want %q %q", tc.src, src, err, tc.bucket, tc.key)
		}
	}
}

// errorField is the value of one extra element of an S3 error ("" if absent).
func errorField(e *s3err.Error, name string) string {
	for _, f := range e.Extra {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

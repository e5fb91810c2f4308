package precondition

import (
	"net/http"
	"testing"
	"time"

	"github.com/s3cond/s3cond/s3err"
)

func TestEvaluateRenameSource(t *testing.T) {
	const etag, modified = `"abc"`, "Sat, 05 Dec 2026 10:00:00 GMT"
	cases := []struct {
		header, value, failed string
	}{
		{HeaderRenameSourceIfMatch, `"abc"`, ""},
		{HeaderRenameSourceIfMatch, `"zzz"`, "x-amz-rename-source-if-match"},
		{HeaderRenameSourceIfNoneMatch, `"abc"`, "x-amz-rename-source-if-none-match"},
		{HeaderRenameSourceIfNoneMatch, "*", "x-amz-rename-source-if-none-match"},
		{HeaderRenameSourceIfNoneMatch, `"zzz"`, ""},
		{HeaderRenameSourceIfModifiedSince, "Sun, 06 Dec 2026 10:00:00 GMT", "x-amz-rename-source-if-modified-since"},
		{HeaderRenameSourceIfModifiedSince, "Fri, 04 Dec 2026 10:00:00 GMT", ""},
		{HeaderRenameSourceIfUnmodifiedSince, "Fri, 04 Dec 2026 10:00:00 GMT", "x-amz-rename-source-if-unmodified-since"},
		{HeaderRenameSourceIfUnmodifiedSince, "Sun, 06 Dec 2026 10:00:00 GMT", ""},
	}
	for _, tc := range cases {
		h := http.Header{tc.header: {tc.value}}
		if got := EvaluateRenameSource(h, etag, modified); got != tc.failed {
			t.Errorf("%s: %s: failed %q, want %q", tc.header, tc.value, got, tc.failed)
		}
	}
}

func TestEvaluateRenameDestination(t *testing.T) {
	modified := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	existing := ObjectState{Exists: true, ETag: `"abc"`, LastModified: modified}
	before, after := "Fri, 04 Dec 2026 10:00:00 GMT", "Sun, 06 Dec 2026 10:00:00 GMT"
	cases := []struct {
		name   string
		h      http.Header
		s      ObjectState
		failed string // "" holds; else the 412's header, or NoSuchKey
	}{
		{"none", http.Header{}, existing, ""},
		{"If-None-Match on existing", http.Header{"If-None-Match": {"*"}}, existing, "If-None-Match"},
		{"If-None-Match on missing", http.Header{"If-None-Match": {"*"}}, ObjectState{}, ""},
		{"If-Match differs", http.Header{"If-Match": {`"zzz"`}}, existing, "If-Match"},
		{"If-Match on missing", http.Header{"If-Match": {`"abc"`}}, ObjectState{}, "NoSuchKey"},
		{"If-Unmodified-Since before", http.Header{"If-Unmodified-Since": {before}}, existing, "If-Unmodified-Since"},
		{"If-Unmodified-Since after", http.Header{"If-Unmodified-Since": {after}}, existing, ""},
		{"If-Match decides over If-Unmodified-Since", http.Header{"If-Match": {`"abc"`}, "If-Unmodified-Since": {before}}, existing, ""},
		{"If-Modified-Since after", http.Header{"If-Modified-Since": {after}}, existing, "If-Modified-Since"},
		{"If-Modified-Since before", http.Header{"If-Modified-Since": {before}}, existing, ""},
		{"dates on missing", http.Header{"If-Modified-Since": {after}, "If-Unmodified-Since": {before}}, ObjectState{}, ""},
	}
	for _, tc := range cases {
		conds, err := ParseWrite(tc.h)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		err = EvaluateRenameDestination(conds, tc.h, tc.s)
		got := ""
		if e := s3err.As(err); err != nil {
			got = string(e.Code)
			if e.Code == s3err.PreconditionFailed {
				got = e.Condition
			}
		}
		if got != tc.failed {
			t.Errorf("%s: %q, want %q (%v)", tc.name, got, tc.failed, err)
		}
	}
}

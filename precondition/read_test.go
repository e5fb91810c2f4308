package precondition

import (
	"net/http"
	"testing"
)

func TestEvaluateReadAsS3(t *testing.T) {
	const etag = `"abc"`
	const modified = "Wed, 02 Dec 2026 07:00:00 GMT"
	const before = "Wed, 02 Dec 2026 06:59:59 GMT"
	const after = "Wed, 02 Dec 2026 07:00:01 GMT"
	cases := []struct {
		name   string
		header http.Header
		want   ReadOutcome
	}{
		{"no conditions", http.Header{}, ReadOutcome{}},
		{"If-Match current", http.Header{"If-Match": {`"abc"`}}, ReadOutcome{}},
		{"If-Match unquoted", http.Header{"If-Match": {`abc`}}, ReadOutcome{}},
		{"If-Match in a list", http.Header{"If-Match": {`"x", "abc"`}}, ReadOutcome{}},
		{"If-Match *", http.Header{"If-Match": {`*`}}, ReadOutcome{}},
		{"If-Match stale", http.Header{"If-Match": {`"old"`}}, ReadOutcome{412, HeaderIfMatch}},
		{"If-Match malformed fails closed", http.Header{"If-Match": {`"abc`}}, ReadOutcome{412, HeaderIfMatch}},
		{"If-Unmodified-Since before", http.Header{"If-Unmodified-Since": {before}}, ReadOutcome{412, HeaderIfUnmodifiedSince}},
		{"If-Unmodified-Since same second", http.Header{"If-Unmodified-Since": {modified}}, ReadOutcome{}},
		{"If-Unmodified-Since unparsable is ignored", http.Header{"If-Unmodified-Since": {"yesterday"}}, ReadOutcome{}},
		{"If-Match holds, If-Unmodified-Since not evaluated (S3: 200)", http.Header{"If-Match": {etag}, "If-Unmodified-Since": {before}}, ReadOutcome{}},
		{"If-None-Match current", http.Header{"If-None-Match": {etag}}, ReadOutcome{304, HeaderIfNoneMatch}},
		{"If-None-Match *", http.Header{"If-None-Match": {"*"}}, ReadOutcome{304, HeaderIfNoneMatch}},
		{"If-None-Match other", http.Header{"If-None-Match": {`"old"`}}, ReadOutcome{}},
		{"If-Modified-Since after", http.Header{"If-Modified-Since": {after}}, ReadOutcome{304, HeaderIfModifiedSince}},
		{"If-Modified-Since same second", http.Header{"If-Modified-Since": {modified}}, ReadOutcome{304, HeaderIfModifiedSince}},
		{"If-Modified-Since before", http.Header{"If-Modified-Since": {before}}, ReadOutcome{}},
		{"If-None-Match matches, If-Modified-Since before (S3: 304)", http.Header{"If-None-Match": {etag}, "If-Modified-Since": {before}}, ReadOutcome{304, HeaderIfNoneMatch}},
		{"If-None-Match other, If-Modified-Since not evaluated", http.Header{"If-None-Match": {`"old"`}, "If-Modified-Since": {after}}, ReadOutcome{}},
		{"412 before 304", http.Header{"If-Match": {`"old"`}, "If-None-Match": {etag}}, ReadOutcome{412, HeaderIfMatch}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := EvaluateRead(tc.header, etag, modified); got != tc.want {
				t.Errorf("EvaluateRead = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestEvaluateReadWithoutLastModifiedSkipsDates(t *testing.T) {
	h := http.Header{"If-Unmodified-Since": {"Wed, 02 Dec 2000 07:00:00 GMT"}, "If-Modified-Since": {"Wed, 02 Dec 2099 07:00:00 GMT"}}
	if got := EvaluateRead(h, `"abc"`, ""); got != (ReadOutcome{}) {
		t.Errorf("EvaluateRead = %+v, want the object served", got)
	}
}

func TestEvaluateCopySourceAsS3(t *testing.T) {
	const etag = `"src"`
	const modified = "Wed, 02 Dec 2026 07:00:00 GMT"
	const before = "Wed, 02 Dec 2026 06:59:59 GMT"
	cases := []struct {
		name   string
		header http.Header
		want   string
	}{
		{"none", http.Header{}, ""},
		{"if-match current", http.Header{HeaderCopySourceIfMatch: {etag}}, ""},
		{"if-match stale", http.Header{HeaderCopySourceIfMatch: {`"old"`}}, HeaderCopySourceIfMatch},
		{"if-none-match current is 412, not 304", http.Header{HeaderCopySourceIfNoneMatch: {etag}}, HeaderCopySourceIfNoneMatch},
		{"if-unmodified-since before", http.Header{HeaderCopySourceIfUnmodifiedSince: {before}}, HeaderCopySourceIfUnmodifiedSince},
		{"if-modified-since its own time", http.Header{HeaderCopySourceIfModifiedSince: {modified}}, HeaderCopySourceIfModifiedSince},
		{"if-match holds, if-unmodified-since false: S3 copies", http.Header{HeaderCopySourceIfMatch: {etag}, HeaderCopySourceIfUnmodifiedSince: {before}}, ""},
		{"read headers do not count", http.Header{"If-Match": {`"old"`}}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := EvaluateCopySource(tc.header, etag, modified); got != tc.want {
				t.Errorf("EvaluateCopySource = %q, want %q", got, tc.want)
			}
			if HasCopySourceConditions(tc.header) != (tc.name != "none" && tc.name != "read headers do not count") {
				t.Errorf("HasCopySourceConditions wrong for %v", tc.header)
			}
		})
	}
}

package proxy

import (
	"errors"
	"net/http"
	"testing"

	"github.com/s3cond/s3cond/precondition"
	"github.com/s3cond/s3cond/s3err"
)

func errCode(err error) s3err.Code {
	var e *s3err.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestParseWriteOffset(t *testing.T) {
	cases := []struct {
		name   string
		header []string
		query  map[string][]string
		offset int64
		ok     bool
		code   s3err.Code
	}{
		{name: "no append"},
		{name: "zero", header: []string{"0"}, ok: true},
		{name: "size", header: []string{"1048576"}, offset: 1 << 20, ok: true},
		{name: "spaces", header: []string{" 12 "}, offset: 12, ok: true},
		{name: "negative", header: []string{"-1"}, code: s3err.InvalidArgument},
		{name: "plus", header: []string{"+1"}, code: s3err.InvalidArgument},
		{name: "empty", header: []string{""}, code: s3err.InvalidArgument},
		{name: "text", header: []string{"ten"}, code: s3err.InvalidArgument},
		{name: "overflow", header: []string{"9223372036854775808"}, code: s3err.InvalidArgument},
		{name: "twice", header: []string{"1", "1"}, code: s3err.InvalidArgument},
		{name: "presigned", query: map[string][]string{"x-amz-write-offset-bytes": {"0"}}, code: s3err.NotImplemented},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			if tc.header != nil {
				h[headerWriteOffset] = tc.header
			}
			offset, ok, err := parseWriteOffset(h, tc.query)
			if errCode(err) != tc.code || ok != tc.ok || offset != tc.offset {
				t.Fatalf("got offset %d, append %v, error %v; want %d, %v, %q", offset, ok, err, tc.offset, tc.ok, tc.code)
			}
		})
	}
}

func TestAppendBounds(t *testing.T) {
	if err := checkAppendBounds(maxObjectSize-10, 10); err != nil {
		t.Errorf("an append to exactly 5 TiB: %v", err)
	}
	if code := errCode(checkAppendBounds(maxObjectSize-10, 11)); code != s3err.EntityTooLarge {
		t.Errorf("an append past 5 TiB: %q, want EntityTooLarge", code)
	}
	if code := errCode(checkAppendBounds(0, -1)); code != s3err.MissingContentLength {
		t.Errorf("an append of unknown length: %q, want MissingContentLength", code)
	}
}

func TestObjectParts(t *testing.T) {
	for etag, want := range map[string]int{`"d41d8cd98f00b204e9800998ecf8427e"`: 1, `"abc-3"`: 3,
		`"abc-10000"`: 10000, "abc-": 1, "abc-x": 1, "": 1} {
		if got := objectParts(etag); got != want {
			t.Errorf("objectParts(%s) = %d, want %d", etag, got, want)
		}
	}
}

func TestAppendCopyRanges(t *testing.T) {
	const mib = 1 << 20
	check := func(size, part int64) []copyRange {
		t.Helper()
		ranges := appendCopyRanges(size, part)
		if len(ranges) > maxObjectParts-1 {
			t.Fatalf("size %d: %d ranges, no room for the appended part", size, len(ranges))
		}
		next := int64(0)
		for i, r := range ranges {
			n := r.last - r.first + 1
			switch {
			case r.first != next:
				t.Fatalf("size %d: range %d starts at %d, want %d", size, i, r.first, next)
			case n < 5*mib:
				t.Fatalf("size %d: range %d is %d bytes, under S3's 5 MiB part minimum", size, i, n)
			case n > 5<<30:
				t.Fatalf("size %d: range %d is %d bytes, over UploadPartCopy's 5 GiB", size, i, n)
			}
			next = r.last + 1
		}
		if next != size {
			t.Fatalf("size %d: ranges end at %d", size, next)
		}
		return ranges
	}
	if got := check(9*mib, 8*mib); len(got) != 1 {
		t.Errorf("9 MiB: %d ranges, want 1 (the remainder joins it)", len(got))
	}
	if got := check(17*mib+3, 8*mib); len(got) != 2 || got[1].last-got[1].first+1 != 9*mib+3 {
		t.Errorf("17 MiB: %v, want 8 MiB and 9 MiB+3", got)
	}
	check(maxObjectSize, 8*mib) // 5 TiB: the part size grows
	check(80000*mib+1, 8*mib)
}

// TestAppendCondition: the offset must be the size, the client's
// conditions come first, the part limit holds, and the first state passed
// is pinned (a later one of another version, even of the same size, is a
// conflict).
func TestAppendCondition(t *testing.T) {
	v1 := precondition.ObjectState{Exists: true, ETag: `"v1"`, Size: 10}
	cond := &appendCondition{offset: 10}
	if err := cond.Evaluate(precondition.ObjectState{}); errCode(err) != s3err.InvalidWriteOffset {
		t.Errorf("offset 10 on a missing object: %v", err)
	}
	if err := cond.Evaluate(precondition.ObjectState{Exists: true, ETag: `"v0"`, Size: 9}); errCode(err) != s3err.InvalidWriteOffset {
		t.Errorf("offset 10 on 9 bytes: %v", err)
	}
	if err := cond.Evaluate(v1); err != nil {
		t.Fatalf("offset 10 on 10 bytes: %v", err)
	}
	if err := cond.Evaluate(v1); err != nil {
		t.Errorf("the pinned version again: %v", err)
	}
	if err := cond.Evaluate(precondition.ObjectState{Exists: true, ETag: `"v2"`, Size: 10}); errCode(err) != s3err.ConditionalRequestConflict {
		t.Errorf("another version of the same size: %v, want a conflict", err)
	}
	if got := cond.LeaseETag(v1); got != "v1" && got != `"v1"` {
		t.Errorf("lease ETag %q, want v1's", got)
	}
	if !cond.Covers(cond.LeaseETag(v1), v1) || cond.Covers(cond.LeaseETag(v1), precondition.ObjectState{}) {
		t.Error("the lease on v1 must cover v1 only")
	}

	create := &appendCondition{offset: 0}
	if err := create.Evaluate(precondition.ObjectState{}); err != nil || create.LeaseETag(precondition.ObjectState{}) != "*" {
		t.Errorf("offset 0 on a missing object: %v, lease %q", err, create.LeaseETag(precondition.ObjectState{}))
	}
	if err := create.Evaluate(precondition.ObjectState{Exists: true, ETag: `"e"`}); errCode(err) != s3err.ConditionalRequestConflict {
		t.Errorf("a pinned absence, then an empty object: %v", err)
	}

	full := &appendCondition{offset: 10}
	if err := full.Evaluate(precondition.ObjectState{Exists: true, ETag: `"x-10000"`, Size: 10}); errCode(err) != s3err.TooManyParts {
		t.Errorf("an append to a 10,000-part object: %v, want TooManyParts", err)
	}
	if err := full.Evaluate(precondition.ObjectState{Exists: true, ETag: `"x-9999"`, Size: 10}); err != nil {
		t.Errorf("an append to a 9,999-part object: %v", err)
	}

	ifMatch, err := precondition.ParseWrite(http.Header{"If-Match": {`"other"`}})
	if err != nil {
		t.Fatal(err)
	}
	wrong := &appendCondition{client: ifMatch, offset: 9}
	if err := wrong.Evaluate(v1); errCode(err) != s3err.PreconditionFailed {
		t.Errorf("a failed If-Match and a wrong offset: %v, want the If-Match's 412 first", err)
	}
}

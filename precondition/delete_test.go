package precondition

import (
	"net/http"
	"testing"
	"time"

	"github.com/s3cond/s3cond/s3err"
)

var modified = time.Date(2026, 12, 1, 16, 28, 38, 0, time.UTC)

// sized is an existing object as a HEAD reports it; its stored time has
// sub-second precision, which Last-Modified does not carry.
var sized = ObjectState{Exists: true, ETag: `"abc"`, Size: 1234, LastModified: modified.Add(400 * time.Millisecond)}

// The semantics are S3's DeleteObject documentation: 412 on a mismatch,
// 204 (so: no error) when the object does not exist, combinable with each
// other and with If-Match (whose 404 on a missing object still holds).
func TestDeleteSizeAndTimeConditions(t *testing.T) {
	httpDate := modified.Format(http.TimeFormat)
	failed := func(c string) *wantErr { return &wantErr{s3err.PreconditionFailed, c} }
	tests := []struct {
		name  string
		h     http.Header
		state ObjectState
		want  *wantErr
	}{
		{"size matches", header("X-Amz-If-Match-Size", "1234"), sized, nil},
		{"size differs", header("X-Amz-If-Match-Size", "1235"), sized, failed("x-amz-if-match-size")},
		{"size on missing object", header("X-Amz-If-Match-Size", "1234"), missing, nil},
		{"size unknown to the HEAD", header("X-Amz-If-Match-Size", "1234"), ObjectState{Exists: true, ETag: `"abc"`, Size: -1}, failed("x-amz-if-match-size")},
		{"time matches (HTTP-date)", header("X-Amz-If-Match-Last-Modified-Time", httpDate), sized, nil},
		{"time matches (ISO 8601)", header("X-Amz-If-Match-Last-Modified-Time", "2026-12-01T16:28:38Z"), sized, nil},
		{"time differs", header("X-Amz-If-Match-Last-Modified-Time", modified.Add(time.Second).Format(http.TimeFormat)), sized, failed("x-amz-if-match-last-modified-time")},
		{"time on missing object", header("X-Amz-If-Match-Last-Modified-Time", httpDate), missing, nil},
		{"time unknown to the HEAD", header("X-Amz-If-Match-Last-Modified-Time", httpDate), ObjectState{Exists: true, ETag: `"abc"`}, failed("x-amz-if-match-last-modified-time")},
		{"both match", header("X-Amz-If-Match-Size", "1234", "X-Amz-If-Match-Last-Modified-Time", httpDate), sized, nil},
		{"size matches, time differs", header("X-Amz-If-Match-Size", "1234", "X-Amz-If-Match-Last-Modified-Time", "Tue, 01 Dec 2026 16:28:39 GMT"), sized, failed("x-amz-if-match-last-modified-time")},
		{"If-Match and size match", header("If-Match", `"abc"`, "X-Amz-If-Match-Size", "1234"), sized, nil},
		{"If-Match matches, size differs", header("If-Match", `"abc"`, "X-Amz-If-Match-Size", "1"), sized, failed("x-amz-if-match-size")},
		{"If-Match differs, size matches", header("If-Match", `"other"`, "X-Amz-If-Match-Size", "1234"), sized, failed("If-Match")},
		{"If-Match with size on missing object", header("If-Match", "*", "X-Amz-If-Match-Size", "1234"), missing, &wantErr{code: s3err.NoSuchKey}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseDelete(tc.h)
			if err != nil {
				t.Fatalf("ParseDelete: %v", err)
			}
			if !c.Active() {
				t.Fatal("a delete with conditions reported inactive: it would take no lease")
			}
			checkErr(t, c.Evaluate(tc.state), tc.want)
		})
	}
}

func TestParseDeleteRefusesMalformedSizeAndTime(t *testing.T) {
	for _, h := range []http.Header{
		header("X-Amz-If-Match-Size", ""),
		header("X-Amz-If-Match-Size", "-1"),
		header("X-Amz-If-Match-Size", "+5"),
		header("X-Amz-If-Match-Size", "12 bytes"),
		header("X-Amz-If-Match-Size", "1", "X-Amz-If-Match-Size", "2"),
		header("X-Amz-If-Match-Last-Modified-Time", "yesterday"),
		header("X-Amz-If-Match-Last-Modified-Time", ""),
	} {
		_, err := ParseDelete(h)
		checkErr(t, err, &wantErr{code: s3err.InvalidArgument})
	}
}

// A size or time condition leases the version it would delete, or "*"
// when there is none, so a create cannot land between check and delete.
func TestDeleteSizeConditionLeasesTheVersionItDeletes(t *testing.T) {
	c, err := ParseDelete(header("X-Amz-If-Match-Size", "1234"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.LeaseETag(sized); got != `"abc"` {
		t.Fatalf("LeaseETag(existing) = %q", got)
	}
	if got := c.LeaseETag(missing); got != "*" {
		t.Fatalf("LeaseETag(missing) = %q", got)
	}
	if !c.Covers(`"abc"`, sized) || c.Covers(`"abc"`, missing) || c.Covers(`"abc"`, ObjectState{Exists: true, ETag: `"new"`, Size: 1234}) {
		t.Fatal("an ETag lease must cover exactly its version")
	}
	if !c.Covers("*", missing) || c.Covers("*", sized) {
		t.Fatal(`a "*" lease must cover exactly the absent object`)
	}
	if c.Header() != "x-amz-if-match-size" || c.String() != "x-amz-if-match-size: 1234" {
		t.Fatalf("Header %q, String %q", c.Header(), c.String())
	}
}

// DeleteObjects' per-entry <Size> and <LastModifiedTime> (ISO 8601 in XML)
// are evaluated as DeleteObject's headers are, with the entry's <ETag>.
func TestForDeleteEntry(t *testing.T) {
	failed := func(c string) *wantErr { return &wantErr{s3err.PreconditionFailed, c} }
	tests := []struct {
		name                   string
		etag, size, modifiedAt string
		state                  ObjectState
		want                   *wantErr
	}{
		{"size matches", "", "1234", "", sized, nil},
		{"size differs", "", "1", "", sized, failed("x-amz-if-match-size")},
		{"time matches", "", "", "2026-12-01T16:28:38.000Z", sized, nil},
		{"time differs", "", "", "2026-12-01T16:28:37Z", sized, failed("x-amz-if-match-last-modified-time")},
		{"ETag and size match", `"abc"`, "1234", "", sized, nil},
		{"ETag differs", `"other"`, "1234", "", sized, failed("If-Match")},
		{"size on a missing object", "", "1234", "", missing, nil},
		{"ETag on a missing object", `"abc"`, "1234", "", missing, &wantErr{code: s3err.NoSuchKey}},
	}
	for _, tc := range tests {
		c, err := ForDeleteEntry(tc.etag, tc.size, tc.modifiedAt)
		if err != nil || !c.Active() {
			t.Fatalf("%s: %v (active %v)", tc.name, err, c.Active())
		}
		t.Run(tc.name, func(t *testing.T) { checkErr(t, c.Evaluate(tc.state), tc.want) })
	}
	for _, bad := range [][2]string{{"-1", ""}, {"12 bytes", ""}, {"", "yesterday"}} {
		_, err := ForDeleteEntry("", bad[0], bad[1])
		checkErr(t, err, &wantErr{code: s3err.InvalidArgument})
	}
	if c, err := ForDeleteEntry("", "", ""); err != nil || c.Active() {
		t.Fatalf("no condition: %v, active %v", err, c.Active())
	}
}

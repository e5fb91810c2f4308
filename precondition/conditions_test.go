package precondition

import (
	"net/http"
	"testing"

	"github.com/s3cond/s3cond/s3err"
)

func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

var (
	missing = ObjectState{}
	current = ObjectState{Exists: true, ETag: `"9b2cf535f27731c974343645a3985328"`}
	multi   = ObjectState{Exists: true, ETag: `"d41d8cd98f00b204e9800998ecf8427e-3"`}
)

// wantErr describes an expected *s3err.Error: code, and Condition for a 412.
type wantErr struct {
	code      s3err.Code
	condition string
}

func checkErr(t *testing.T, err error, want *wantErr) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("got error %v, want none", err)
		}
		return
	}
	e, ok := err.(*s3err.Error)
	if !ok {
		t.Fatalf("got %T %v, want *s3err.Error %s", err, err, want.code)
	}
	if e.Code != want.code || e.Condition != want.condition {
		t.Fatalf("got %s (Condition %q), want %s (Condition %q)", e.Code, e.Condition, want.code, want.condition)
	}
}

func TestWriteConditionsFollowSpecTable(t *testing.T) {
	preconditionFailed := func(h string) *wantErr { return &wantErr{s3err.PreconditionFailed, h} }
	noSuchKey := &wantErr{code: s3err.NoSuchKey}
	tests := []struct {
		name  string
		h     http.Header
		state ObjectState
		want  *wantErr
	}{
		{"no headers, missing", header(), missing, nil},
		{"no headers, exists", header(), current, nil},
		{"If-None-Match * on missing object", header("If-None-Match", "*"), missing, nil},
		{"If-None-Match * on existing object", header("If-None-Match", "*"), current, preconditionFailed("If-None-Match")},
		{"If-None-Match * with spaces", header("If-None-Match", "  * "), current, preconditionFailed("If-None-Match")},
		{"If-Match etag matches", header("If-Match", `"9b2cf535f27731c974343645a3985328"`), current, nil},
		{"If-Match bare etag matches", header("If-Match", `9b2cf535f27731c974343645a3985328`), current, nil},
		{"If-Match weak etag matches", header("If-Match", `W/"9b2cf535f27731c974343645a3985328"`), current, nil},
		{"If-Match etag differs", header("If-Match", `"0000"`), current, preconditionFailed("If-Match")},
		{"If-Match etag on missing object", header("If-Match", `"9b2cf535f27731c974343645a3985328"`), missing, noSuchKey},
		{"If-Match * on existing object", header("If-Match", "*"), current, nil},
		{"If-Match * on missing object", header("If-Match", "*"), missing, noSuchKey},
		{"If-Match list, one matches", header("If-Match", `"0000", "9b2cf535f27731c974343645a3985328"`), current, nil},
		{"If-Match list, none match", header("If-Match", `"0000", "1111"`), current, preconditionFailed("If-Match")},
		{"If-Match repeated header lines", header("If-Match", `"0000"`, "If-Match", `"9b2cf535f27731c974343645a3985328"`), current, nil},
		{"If-Match multipart etag", header("If-Match", `"d41d8cd98f00b204e9800998ecf8427e-3"`), multi, nil},
		{"If-Match multipart etag, other part count", header("If-Match", `"d41d8cd98f00b204e9800998ecf8427e-2"`), multi, preconditionFailed("If-Match")},
		{"If-Match plain md5 against multipart etag", header("If-Match", `"d41d8cd98f00b204e9800998ecf8427e"`), multi, preconditionFailed("If-Match")},
		{"If-Match is case-sensitive", header("If-Match", `"9B2CF535F27731C974343645A3985328"`), current, preconditionFailed("If-Match")},
		{"If-Match on backend that reports unquoted ETag", header("If-Match", `"abc"`), ObjectState{Exists: true, ETag: "abc"}, nil},
		{"If-Match empty quoted etag never matches", header("If-Match", `""`), ObjectState{Exists: true, ETag: ""}, preconditionFailed("If-Match")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseWrite(tt.h)
			if err != nil {
				t.Fatalf("ParseWrite: %v", err)
			}
			checkErr(t, c.Evaluate(tt.state), tt.want)
		})
	}
}

func TestParseWriteRejectsWhatS3Rejects(t *testing.T) {
	notImplemented := &wantErr{code: s3err.NotImplemented}
	invalid := &wantErr{code: s3err.InvalidArgument}
	tests := []struct {
		name string
		h    http.Header
		want *wantErr
	}{
		{"If-None-Match with an etag", header("If-None-Match", `"abc"`), notImplemented},
		{"If-None-Match list with *", header("If-None-Match", `*, "abc"`), notImplemented},
		{"If-None-Match weak *", header("If-None-Match", `W/*`), notImplemented},
		{"If-None-Match empty", header("If-None-Match", ""), notImplemented},
		{"both headers", header("If-Match", `"abc"`, "If-None-Match", "*"), notImplemented},
		{"both headers, If-Match *", header("If-Match", "*", "If-None-Match", "*"), notImplemented},
		{"If-Match empty", header("If-Match", ""), invalid},
		{"If-Match only spaces", header("If-Match", "   "), invalid},
		{"If-Match unbalanced quote", header("If-Match", `"abc`), invalid},
		{"If-Match trailing quote", header("If-Match", `abc"`), invalid},
		{"If-Match * among tags", header("If-Match", `*, "abc"`), invalid},
		{"If-Match repeated *", header("If-Match", "*", "If-Match", "*"), invalid},
		{"If-Match garbage after tag", header("If-Match", `"abc" def`), invalid},
		{"If-Match control character", header("If-Match", "\"a\x01b\""), invalid},
		{"If-Match only commas", header("If-Match", ", ,"), invalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseWrite(tt.h)
			checkErr(t, err, tt.want)
			if c.Active() {
				t.Fatalf("rejected header still produced an active condition %v", c)
			}
		})
	}
}

func TestStatusCodesMatchS3(t *testing.T) {
	_, err := ParseWrite(header("If-None-Match", `"abc"`))
	if got := s3err.As(err).Status(); got != http.StatusNotImplemented {
		t.Errorf("If-None-Match etag: status %d, want 501", got)
	}
	_, err = ParseWrite(header("If-Match", `"abc`))
	if got := s3err.As(err).Status(); got != http.StatusBadRequest {
		t.Errorf("malformed If-Match: status %d, want 400", got)
	}
	c, _ := ParseWrite(header("If-Match", `"abc"`))
	if got := s3err.As(c.Evaluate(current)).Status(); got != http.StatusPreconditionFailed {
		t.Errorf("mismatch: status %d, want 412", got)
	}
	if got := s3err.As(c.Evaluate(missing)).Status(); got != http.StatusNotFound {
		t.Errorf("missing: status %d, want 404", got)
	}
}

func TestDeleteConditionsFollowSpecTable(t *testing.T) {
	tests := []struct {
		name  string
		h     http.Header
		state ObjectState
		want  *wantErr
	}{
		{"no header", header(), missing, nil},
		{"If-Match etag matches", header("If-Match", `"9b2cf535f27731c974343645a3985328"`), current, nil},
		{"If-Match etag differs", header("If-Match", `"0000"`), current, &wantErr{s3err.PreconditionFailed, "If-Match"}},
		{"If-Match etag, missing", header("If-Match", `"0000"`), missing, &wantErr{code: s3err.NoSuchKey}},
		{"If-Match *, exists", header("If-Match", "*"), current, nil},
		{"If-Match *, missing", header("If-Match", "*"), missing, &wantErr{code: s3err.NoSuchKey}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseDelete(tt.h)
			if err != nil {
				t.Fatalf("ParseDelete: %v", err)
			}
			checkErr(t, c.Evaluate(tt.state), tt.want)
		})
	}
}

func TestParseDeleteRejectsIfNoneMatch(t *testing.T) {
	for _, v := range []string{"*", `"abc"`} {
		_, err := ParseDelete(header("If-None-Match", v))
		checkErr(t, err, &wantErr{code: s3err.NotImplemented})
	}
	_, err := ParseDelete(header("If-Match", `"abc`))
	checkErr(t, err, &wantErr{code: s3err.InvalidArgument})
}

func TestForETagBuildsDeleteObjectsEntryCondition(t *testing.T) {
	tests := []struct {
		etag   string
		active bool
		state  ObjectState
		want   *wantErr
	}{
		{"", false, missing, nil},
		{"  ", false, current, nil},
		{"*", true, current, nil},
		{"*", true, missing, &wantErr{code: s3err.NoSuchKey}},
		{`"9b2cf535f27731c974343645a3985328"`, true, current, nil},
		{`9b2cf535f27731c974343645a3985328`, true, current, nil},
		{`W/"9b2cf535f27731c974343645a3985328"`, true, current, nil},
		{`"0000"`, true, current, &wantErr{s3err.PreconditionFailed, "If-Match"}},
		{`"0000"`, true, missing, &wantErr{code: s3err.NoSuchKey}},
		{`"abc`, true, current, &wantErr{s3err.PreconditionFailed, "If-Match"}},
		{`"a", "9b2cf535f27731c974343645a3985328"`, true, current, &wantErr{s3err.PreconditionFailed, "If-Match"}},
	}
	for _, tt := range tests {
		c := ForETag(tt.etag)
		if c.Active() != tt.active {
			t.Errorf("ForETag(%q).Active() = %v, want %v", tt.etag, c.Active(), tt.active)
		}
		t.Run(tt.etag, func(t *testing.T) { checkErr(t, c.Evaluate(tt.state), tt.want) })
	}
}

func TestAccessorsDescribeTheCondition(t *testing.T) {
	tests := []struct {
		h        http.Header
		active   bool
		create   bool
		header   string
		leaseFor ObjectState
		lease    string
	}{
		{header(), false, false, "", current, ""},
		{header("If-None-Match", "*"), true, true, "If-None-Match", missing, "*"},
		{header("If-Match", "*"), true, false, "If-Match", current, `"9b2cf535f27731c974343645a3985328"`},
		{header("If-Match", `W/"0000", 9b2cf535f27731c974343645a3985328`), true, false, "If-Match", current, `"9b2cf535f27731c974343645a3985328"`},
		{header("If-Match", "*"), true, false, "If-Match", ObjectState{Exists: true, ETag: "abc-2"}, `"abc-2"`},
	}
	for _, tt := range tests {
		c, err := ParseWrite(tt.h)
		if err != nil {
			t.Fatalf("ParseWrite(%v): %v", tt.h, err)
		}
		if c.Active() != tt.active || c.IsCreate() != tt.create || c.Header() != tt.header {
			t.Errorf("%v: Active=%v IsCreate=%v Header=%q, want %v %v %q",
				tt.h, c.Active(), c.IsCreate(), c.Header(), tt.active, tt.create, tt.header)
		}
		if got := c.LeaseETag(tt.leaseFor); got != tt.lease {
			t.Errorf("%v: LeaseETag = %q, want %q", tt.h, got, tt.lease)
		}
	}
}

func TestETagsReturnsCanonicalCopy(t *testing.T) {
	c, err := ParseWrite(header("If-Match", `W/"a", b`))
	if err != nil {
		t.Fatal(err)
	}
	got := c.ETags()
	if len(got) != 2 || got[0] != `"a"` || got[1] != `"b"` {
		t.Fatalf("ETags = %q", got)
	}
	got[0] = "changed"
	if c.ETags()[0] != `"a"` {
		t.Fatal("ETags exposes internal state")
	}
}

func TestCoversDetectsReplacedVersion(t *testing.T) {
	replaced := ObjectState{Exists: true, ETag: `"ffff"`}
	create, _ := ParseWrite(header("If-None-Match", "*"))
	anyVersion, _ := ParseWrite(header("If-Match", "*"))
	list, _ := ParseWrite(header("If-Match", `"9b2cf535f27731c974343645a3985328", "ffff"`))
	none := Conditions{}
	tests := []struct {
		name  string
		c     Conditions
		lease string
		state ObjectState
		want  bool
	}{
		{"create, still absent", create, "*", missing, true},
		{"create, now exists", create, "*", current, false},
		{"create, wrong lease key", create, `"9b2cf535f27731c974343645a3985328"`, missing, false},
		{"If-Match *, same version", anyVersion, anyVersion.LeaseETag(current), current, true},
		{"If-Match *, unquoted backend ETag", anyVersion, anyVersion.LeaseETag(current), ObjectState{Exists: true, ETag: "9b2cf535f27731c974343645a3985328"}, true},
		{"If-Match *, replaced in between", anyVersion, anyVersion.LeaseETag(current), replaced, false},
		{"If-Match *, deleted in between", anyVersion, anyVersion.LeaseETag(current), missing, false},
		{"If-Match list, other listed version now", list, list.LeaseETag(current), replaced, false},
		{"unconditional", none, "", current, true},
	}
	for _, tt := range tests {
		if got := tt.c.Covers(tt.lease, tt.state); got != tt.want {
			t.Errorf("%s: Covers = %v, want %v", tt.name, got, tt.want)
		}
	}
	// The case Covers exists for: the condition still holds on the new version.
	if err := list.Evaluate(replaced); err != nil {
		t.Fatalf("list should still match the replaced version: %v", err)
	}
}

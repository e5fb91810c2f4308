package precondition

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestCanonicalETag(t *testing.T) {
	tests := map[string]string{
		`abc`:          `"abc"`,
		`"abc"`:        `"abc"`,
		`W/"abc"`:      `"abc"`,
		` "abc" `:      `"abc"`,
		`"abc-12"`:     `"abc-12"`,
		`"abc`:         `"abc"`,
		``:             `""`,
		`""`:           `""`,
		`"W/abc"`:      `"W/abc"`,
		`W/abc`:        `"abc"`,
		`"""`:          `"""`,
		`"with,comma"`: `"with,comma"`,
		`"9b2cf535f2"`: `"9b2cf535f2"`,
		`"9B2CF535F2"`: `"9B2CF535F2"`,
		"\"\xff\xfe\"": "\"\xff\xfe\"",
	}
	for in, want := range tests {
		if got := CanonicalETag(in); got != want {
			t.Errorf("CanonicalETag(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestETagsEqual(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{`"abc"`, `"abc"`, true},
		{`"abc"`, `abc`, true},
		{`W/"abc"`, `"abc"`, true},
		{`W/"abc"`, `W/"abc"`, true},
		{` "abc"`, `"abc" `, true},
		{`"abc"`, `"abd"`, false},
		{`"abc"`, `"ABC"`, false},
		{`"abc-2"`, `"abc"`, false},
		{`"abc-2"`, `"abc-2"`, true},
		{``, ``, false},
		{`""`, `""`, false},
		{`"*"`, `"abc"`, false},
	}
	for _, tt := range tests {
		if got := ETagsEqual(tt.a, tt.b); got != tt.want {
			t.Errorf("ETagsEqual(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := ETagsEqual(tt.b, tt.a); got != tt.want {
			t.Errorf("ETagsEqual(%q, %q) = %v, want %v (not symmetric)", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestParseETagList(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{`*`, []string{"*"}},
		{` * `, []string{"*"}},
		{`"abc"`, []string{`"abc"`}},
		{`abc`, []string{`"abc"`}},
		{`W/"abc"`, []string{`"abc"`}},
		{`"a","b"`, []string{`"a"`, `"b"`}},
		{`"a", W/"b" ,c`, []string{`"a"`, `"b"`, `"c"`}},
		{"\t\"a\"\t,\t\"b\"\t", []string{`"a"`, `"b"`}},
		{`, "a",, "b",`, []string{`"a"`, `"b"`}},
		{`"a,b"`, []string{`"a,b"`}},
		{`""`, []string{`""`}},
		{`"*"`, []string{`"*"`}},
		{`"abc-10"`, []string{`"abc-10"`}},
		{"\"\x80\xff\"", []string{"\"\x80\xff\""}},
	}
	for _, tt := range tests {
		got, err := ParseETagList(tt.in)
		if err != nil {
			t.Errorf("ParseETagList(%q): %v", tt.in, err)
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("ParseETagList(%q) = %q, want %q", tt.in, got, tt.want)
		}
		checkParsedList(t, tt.in, got)
	}
}

func TestParseETagListRejectsMalformed(t *testing.T) {
	for _, in := range []string{
		``, `   `, `,`, `"abc`, `abc"`, `a"b`, `"a" "b"`, `"a"b`, `*, "a"`, `"a", *`, `*,*`,
		`W/`, `W/"a`, "\"a\x00\"", "a\x7fb", `"a b"`, `a b`, "\"a\nb\"",
	} {
		got, err := ParseETagList(in)
		if err == nil {
			t.Errorf("ParseETagList(%q) = %q, want error", in, got)
			continue
		}
		if !errors.Is(err, ErrMalformedETagList) {
			t.Errorf("ParseETagList(%q) error %v does not wrap ErrMalformedETagList", in, err)
		}
	}
}

// checkParsedList states what every successful ParseETagList result must
// satisfy; the fuzz target and the unit tests share it.
func checkParsedList(t *testing.T, in string, tags []string) {
	t.Helper()
	if len(tags) == 0 {
		t.Fatalf("ParseETagList(%q) succeeded with no tags", in)
	}
	if slices.Contains(tags, "*") && len(tags) != 1 {
		t.Fatalf("ParseETagList(%q) = %q: * not alone", in, tags)
	}
	for _, tag := range tags {
		if tag != "*" && CanonicalETag(tag) != tag {
			t.Fatalf("ParseETagList(%q) tag %q is not canonical", in, tag)
		}
	}
	again, err := ParseETagList(strings.Join(tags, ", "))
	if err != nil || !slices.Equal(again, tags) {
		t.Fatalf("ParseETagList(%q) = %q does not round-trip: %q, %v", in, tags, again, err)
	}
}

func FuzzParseETagList(f *testing.F) {
	for _, seed := range []string{`*`, `"abc"`, `W/"a", b`, `"a,b", "c"`, `"abc`, `, ,`, "\"\xff\"", `"d41d8cd98f00b204e9800998ecf8427e-3"`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		tags, err := ParseETagList(in)
		if err != nil {
			if !errors.Is(err, ErrMalformedETagList) {
				t.Fatalf("error %v does not wrap ErrMalformedETagList", err)
			}
			return
		}
		checkParsedList(t, in, tags)
		for _, tag := range tags {
			if tag != "*" && !ETagsEqual(tag, tag) && tag != `""` {
				t.Fatalf("tag %q does not equal itself", tag)
			}
		}
	})
}

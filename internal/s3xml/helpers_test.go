package s3xml

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/s3cond/s3cond/s3err"
)

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "aws", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func wantCode(t *testing.T, err error, code s3err.Code) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", code)
	}
	e, ok := err.(*s3err.Error)
	if !ok {
		t.Fatalf("got %T %v, want *s3err.Error %s", err, err, code)
	}
	if e.Code != code {
		t.Fatalf("got %s (%v), want %s", e.Code, err, code)
	}
}

// deleteBody builds a DeleteObjects body with n objects.
func deleteBody(n int) string {
	var b strings.Builder
	b.WriteString("<Delete>")
	for i := range n {
		b.WriteString("<Object><Key>k")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString("</Key></Object>")
	}
	b.WriteString("</Delete>")
	return b.String()
}

// nested builds n levels of <a> inside root.
func nested(root string, n int) string {
	return "<" + root + ">" + strings.Repeat("<a>", n) + strings.Repeat("</a>", n) + "</" + root + ">"
}

package testservers

import (
	"fmt"
	"strings"
	"testing"
)

// outcomeTB stands for the testing.T of a test that calls Require: it
// records a skip or a failure instead of ending the test.
type outcomeTB struct {
	testing.TB
	skipped, failed string
}

func (o *outcomeTB) Helper()           {}
func (o *outcomeTB) Skip(args ...any)  { o.skipped = fmt.Sprint(args...) }
func (o *outcomeTB) Fatal(args ...any) { o.failed = fmt.Sprint(args...) }

func TestRequireFindsAProgramOnPath(t *testing.T) {
	o := &outcomeTB{TB: t}
	if path := Require(o, "go"); path == "" || o.skipped != "" || o.failed != "" {
		t.Fatalf("Require(go) = %q, skipped %q, failed %q", path, o.skipped, o.failed)
	}
}

// A missing program fails the test, naming the install step; only -short
// turns that into a skip with the same message.
func TestRequireMissingProgramFailsOrSkipsUnderShort(t *testing.T) {
	o := &outcomeTB{TB: t}
	if path := Require(o, "s3cond-no-such-program"); path != "" {
		t.Fatalf("Require found a program that does not exist: %q", path)
	}
	got, other := o.failed, o.skipped
	if testing.Short() {
		got, other = o.skipped, o.failed
	}
	if other != "" || !strings.Contains(got, "s3cond-no-such-program") || !strings.Contains(got, "scripts/test-deps.sh") {
		t.Fatalf("short=%v: failed %q, skipped %q; want one message naming the program and scripts/test-deps.sh",
			testing.Short(), o.failed, o.skipped)
	}
}

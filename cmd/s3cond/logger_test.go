package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/s3cond/s3cond/internal/config"
)

// A console log written to a file or a buffer carries no ANSI escapes: only
// a terminal gets colours.
func TestConsoleLogIsPlainWhenNotATerminal(t *testing.T) {
	file, err := os.Create(filepath.Join(t.TempDir(), "s3cond.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	var buf bytes.Buffer
	for _, out := range []struct {
		name string
		w    io.Writer
		read func() string
	}{
		{"buffer", &buf, buf.String},
		{"file", file, func() string { b, _ := os.ReadFile(file.Name()); return string(b) }},
	} {
		log, err := newLogger(config.Log{Level: "info", Format: config.LogFormatConsole}, out.w)
		if err != nil {
			t.Fatal(err)
		}
		log.Warn().Str("bucket", "b").Msg("something to see")
		got := out.read()
		if !strings.Contains(got, "something to see") || !strings.Contains(got, "bucket=b") {
			t.Fatalf("%s: log line %q", out.name, got)
		}
		if strings.Contains(got, "\x1b[") {
			t.Fatalf("%s: log line has ANSI escapes: %q", out.name, got)
		}
	}
}

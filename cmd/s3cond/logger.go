package main

import (
	"fmt"
	"io"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/internal/config"
)

// newLogger writes to stderr at c.Level, as JSON or for people (console).
// The console form is coloured only on a terminal: a log file or a pipe
// gets plain text, not ANSI escape sequences.
func newLogger(c config.Log, stderr io.Writer) (zerolog.Logger, error) {
	level, err := zerolog.ParseLevel(c.Level)
	if err != nil {
		return zerolog.Logger{}, fmt.Errorf("log.level: %w", err)
	}
	var w io.Writer = stderr
	if c.Format == config.LogFormatConsole {
		w = zerolog.ConsoleWriter{Out: stderr, TimeFormat: time.RFC3339, NoColor: !isTerminal(stderr)}
	}
	return zerolog.New(w).Level(level).With().Timestamp().Logger(), nil
}

// isTerminal reports whether w is a file descriptor open on a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

package config

import (
	"fmt"
	"strings"
)

// Error is a configuration problem, tied to the key it concerns. Its text is
// one line: "config: [line N: ]key: problem".
type Error struct {
	Line    int    // line in the config file, 0 when unknown or not from the file
	Key     string // key path such as "keys[1].access"; empty for file-level problems
	Problem string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("config: ")
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Problem)
	return b.String()
}

func keyError(key, format string, args ...any) *Error {
	return &Error{Key: key, Problem: fmt.Sprintf(format, args...)}
}

// joinKey appends a mapping key to a key path.
func joinKey(parent, child string) string {
	if parent == "" {
		return child
	}
	return parent + "." + child
}

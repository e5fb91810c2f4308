package e2e

import (
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/s3cond/s3cond/internal/testservers"
)

// resolvedPrograms caches clientProgram's answers for the test binary's life.
var resolvedPrograms sync.Map

// clientProgram finds a client program (aws, python3, node, rclone, s3cmd)
// as the first on PATH; a missing one fails the test, or skips it under
// -short (testservers.Require). A pyenv shim is replaced by the program it
// stands for: the shim's own start-up costs about a second per call, and
// the tests make many calls.
func clientProgram(t testing.TB, name string) string {
	t.Helper()
	if p, ok := resolvedPrograms.Load(name); ok {
		return p.(string)
	}
	if name == "python3" {
		// Every Python client script of these tests imports boto3.
		testservers.Require(t, "boto3")
	}
	path := testservers.Require(t, name)
	if strings.Contains(path, "/.pyenv/shims/") {
		if out, err := exec.Command("pyenv", "which", name).Output(); err == nil {
			if real := strings.TrimSpace(string(out)); real != "" {
				path = real
			}
		}
	}
	resolvedPrograms.Store(name, path)
	return path
}

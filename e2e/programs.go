package e2e

import (
	"os/exec"
	"strings"
	"sync"
)

// resolvedPrograms caches clientProgram's answers for the test binary's life.
var resolvedPrograms sync.Map

// clientProgram finds a client program (aws, python3) as the first on PATH.
// A pyenv shim is replaced by the program it stands for: the shim's own
// start-up costs about a second per call, and the tests make many calls.
func clientProgram(name string) string {
	if p, ok := resolvedPrograms.Load(name); ok {
		return p.(string)
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return name // let the run fail with exec's own message
	}
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

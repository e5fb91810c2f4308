package testservers

import (
	"os"
	"path/filepath"
	"testing"
)

// RepoRoot is the directory holding the module's go.mod, found by walking up
// from the test's working directory (go test runs each package in its own
// folder, so the root differs by package depth).
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("find repository root: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("find repository root: no go.mod above the working directory")
		}
		dir = parent
	}
}

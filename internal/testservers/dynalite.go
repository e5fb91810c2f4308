package testservers

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// DynalitePath finds dynalite's entry script: $S3COND_DYNALITE, else the copy
// pinned by e2e/node/package-lock.json (install it with `npm ci` in e2e/node).
func DynalitePath(t testing.TB) (string, error) {
	if p := os.Getenv("S3COND_DYNALITE"); p != "" {
		return p, nil
	}
	p := filepath.Join(RepoRoot(t), "e2e", "node", "node_modules", ".bin", "dynalite")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("dynalite not installed (run `npm ci` in e2e/node): %w", err)
	}
	return p, nil
}

// StartDynalite starts dynalite (an in-memory DynamoDB emulation on Node) on a
// free 127.0.0.1 port, stops it when the test ends and returns its endpoint,
// "http://127.0.0.1:PORT". It runs node directly rather than through npx so
// the harness holds the server's own PID. A missing node or dynalite fails
// the test (see Require).
func StartDynalite(t testing.TB) string {
	t.Helper()
	script := Require(t, "dynalite")
	node := Require(t, "node")
	port := FreePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	Start(t, Spec{
		Name: "dynalite",
		Path: node,
		Args: []string{script, "--host", "127.0.0.1", "--port", strconv.Itoa(port),
			"--createTableMs", "0", "--deleteTableMs", "0", "--updateTableMs", "0"},
		Addr: addr,
	})
	return "http://" + addr
}

package e2e

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/s3cond/s3cond/internal/testservers"
)

// embeddedLeaseProxy starts s3cond on versitygw with the embedded lease
// store in dataDir, and makes one conditional write so the file is in use.
func embeddedLeaseProxy(t *testing.T, e *Env, dataDir string) *testservers.S3cond {
	t.Helper()
	cfg := e.Config
	cfg.DataDir = dataDir
	cfg.Server.Listen = testservers.FreeAddr(t)
	text, err := cfg.YAML()
	if err != nil {
		t.Fatal(err)
	}
	p := testservers.StartS3cond(t, text, e.processEnv...)
	resp := Do(t, p.Endpoint, e.RW, RawRequest{Method: http.MethodPut, Path: "/leasefile/k",
		Header: http.Header{"If-None-Match": {"*"}}, Body: []byte("first")})
	if resp.Status != http.StatusOK {
		t.Fatalf("conditional PUT: %d %s", resp.Status, resp.shortBody())
	}
	return p
}

// runS3condExpectingRefusal runs `s3cond serve` on e.Config with dataDir
// and requires it to exit with an error saying want, within 20 s.
func runS3condExpectingRefusal(t *testing.T, e *Env, dataDir, want string) {
	t.Helper()
	cfg := e.Config
	cfg.DataDir = dataDir
	cfg.Server.Listen = testservers.FreeAddr(t)
	text, err := cfg.YAML()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s3cond.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testservers.BuildS3cond(t), "serve", "--config", path)
	cmd.Env = append(os.Environ(), "S3COND_ADMIN_LISTEN=127.0.0.1:0")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("s3cond started (and ran until killed) where it must refuse to:\n%s", out)
	}
	if err == nil || !strings.Contains(string(out), want) || strings.Contains(string(out), "panic:") {
		t.Fatalf("s3cond exited with %v, want an error saying %q and no panic:\n%s", err, want, out)
	}
}

// The embedded lease file deleted under a running s3cond: a second s3cond
// on the same data directory must refuse to start, not grant leases from a
// fresh file beside the first one's.
func TestDeletedLeaseFileKeepsASecondProcessOut(t *testing.T) {
	e := NewEnv(t)
	e.RequireProxy(t)
	CreateBucket(t, e.Client(t, e.RW), "leasefile")
	dataDir := filepath.Join(t.TempDir(), "data")
	embeddedLeaseProxy(t, e, dataDir)
	if err := os.Remove(filepath.Join(dataDir, "leases.db")); err != nil {
		t.Fatal(err)
	}
	runS3condExpectingRefusal(t, e, dataDir, "another process holds it")
}

// A corrupted lease file stops s3cond at start with a clear error, not a
// bbolt panic.
func TestCorruptLeaseFileIsRefusedClearly(t *testing.T) {
	e := NewEnv(t)
	e.RequireProxy(t)
	CreateBucket(t, e.Client(t, e.RW), "leasefile")
	dataDir := filepath.Join(t.TempDir(), "data")
	p := embeddedLeaseProxy(t, e, dataDir)
	p.Process.Stop()
	file := filepath.Join(dataDir, "leases.db")
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i := 2 * os.Getpagesize(); i < len(raw); i++ {
		raw[i] = 0xff // every page past the two meta pages
	}
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	runS3condExpectingRefusal(t, e, dataDir, "the lease file is corrupt")
}

// The embedded lease file deleted while s3cond was stopped: the restarted
// s3cond does not take the fresh file for a clean start (the leases held in
// the old one are gone with it) and answers conditional writes 503 until
// timeout × skew has passed; other requests are served meanwhile.
func TestLeaseFileDeletedWhileStoppedIsWaitedOut(t *testing.T) {
	e := NewEnv(t)
	e.RequireProxy(t)
	CreateBucket(t, e.Client(t, e.RW), "leasefile")
	dataDir := filepath.Join(t.TempDir(), "data")
	p := embeddedLeaseProxy(t, e, dataDir)
	p.Process.Kill()
	if err := os.Remove(filepath.Join(dataDir, "leases.db")); err != nil {
		t.Fatal(err)
	}
	p.Restart(t)
	conditional := Do(t, p.Endpoint, e.RW, RawRequest{Method: http.MethodPut, Path: "/leasefile/after",
		Header: http.Header{"If-None-Match": {"*"}}, Body: []byte("after")})
	if conditional.Status != http.StatusServiceUnavailable {
		t.Fatalf("conditional PUT after the restart: %d %s, want 503 while the lost leases may still be live",
			conditional.Status, conditional.shortBody())
	}
	plain := Do(t, p.Endpoint, e.RW, RawRequest{Method: http.MethodPut, Path: "/leasefile/plain", Body: []byte("plain")})
	if plain.Status != http.StatusOK {
		t.Fatalf("plain PUT after the restart: %d %s", plain.Status, plain.shortBody())
	}
}

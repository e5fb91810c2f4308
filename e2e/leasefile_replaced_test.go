package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// backUpLeaseFile copies the lease file aside, as a backup job would.
func backUpLeaseFile(t *testing.T, dataDir string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dataDir, "leases.db"))
	if err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(t.TempDir(), "leases.db.backup")
	if err := os.WriteFile(backup, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return backup
}

func conditionalPut(t *testing.T, e *Env, endpoint, key string) *RawResponse {
	t.Helper()
	return Do(t, endpoint, e.RW, RawRequest{Method: http.MethodPut, Path: "/leasefile/" + key,
		Header: http.Header{"If-None-Match": {"*"}}, Body: []byte(key)})
}

// A backup of the embedded lease file moved over it while s3cond runs:
// the leases this s3cond grants from then on would be recorded in a file
// no restart reads, so conditional writes answer 503 (and it is logged)
// until s3cond is restarted; plain writes go on.
func TestLeaseFileReplacedUnderARunningProcessAnswers503(t *testing.T) {
	e := NewEnv(t)
	e.RequireProxy(t)
	CreateBucket(t, e.Client(t, e.RW), "leasefile")
	dataDir := filepath.Join(t.TempDir(), "data")
	p := embeddedLeaseProxy(t, e, dataDir)
	if err := os.Rename(backUpLeaseFile(t, dataDir), filepath.Join(dataDir, "leases.db")); err != nil {
		t.Fatal(err)
	}
	if resp := conditionalPut(t, e, p.Endpoint, "after"); resp.Status != http.StatusServiceUnavailable {
		t.Fatalf("conditional PUT after the lease file was replaced: %d %s, want 503", resp.Status, resp.shortBody())
	}
	p.Process.WaitForOutput(t, 10*time.Second, "no longer the one s3cond opened")
	plain := Do(t, p.Endpoint, e.RW, RawRequest{Method: http.MethodPut, Path: "/leasefile/plain", Body: []byte("plain")})
	if plain.Status != http.StatusOK {
		t.Fatalf("plain PUT after the lease file was replaced: %d %s", plain.Status, plain.shortBody())
	}
}

// An older backup of the lease file restored while s3cond was stopped
// lacks the leases granted after it was taken: the restarted s3cond finds
// it is not the file it recorded, and answers conditional writes 503 for
// timeout × skew instead of granting leases from it.
func TestLeaseFileRestoredFromABackupWhileStoppedIsWaitedOut(t *testing.T) {
	e := NewEnv(t)
	e.RequireProxy(t)
	CreateBucket(t, e.Client(t, e.RW), "leasefile")
	dataDir := filepath.Join(t.TempDir(), "data")
	p := embeddedLeaseProxy(t, e, dataDir)
	backup := backUpLeaseFile(t, dataDir)
	if resp := conditionalPut(t, e, p.Endpoint, "later"); resp.Status != http.StatusOK {
		t.Fatalf("conditional PUT: %d %s", resp.Status, resp.shortBody())
	}
	p.Process.Stop()
	if err := os.Rename(backup, filepath.Join(dataDir, "leases.db")); err != nil {
		t.Fatal(err)
	}
	p.Restart(t)
	if resp := conditionalPut(t, e, p.Endpoint, "after"); resp.Status != http.StatusServiceUnavailable {
		t.Fatalf("conditional PUT after the restore: %d %s, want 503 while the leases missing from the backup may still be live",
			resp.Status, resp.shortBody())
	}
	p.Process.WaitForOutput(t, 10*time.Second, "replaced while s3cond was stopped")
}

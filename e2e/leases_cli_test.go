package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/s3cond/s3cond/internal/testservers"
)

// The lease settings of the `s3cond leases` tests: a dead holder's lease
// is taken over only after timeout × skew = 60 s, far beyond the wait
// budget, so a conditional write that succeeds within its budget did not
// wait the lease out.
func leasesCLIConfig(c *Config) {
	c.Lease.Timeout = "20s"
	c.Lease.MaxClockSkewRate = 3
	c.Lease.WaitBudget = "2s"
}

// leaseRowJSON is a row as `s3cond leases list --json` prints it.
type leaseRowJSON struct {
	Path       string `json:"path"`
	ETag       string `json:"etag"`
	Generation uint64 `json:"generation"`
	Owner      string `json:"owner"`
	Released   bool   `json:"released"`
	AgeSeconds *int64 `json:"age_seconds"`
}

// leasesCommand runs `s3cond leases ARGS...` and returns its stdout, its
// stderr and its error (an *exec.ExitError when it exited non-zero).
func leasesCommand(t *testing.T, env []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testservers.BuildS3cond(t), append([]string{"leases"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

func mustLeasesCommand(t *testing.T, env []string, args ...string) (stdout, stderr string) {
	t.Helper()
	stdout, stderr, err := leasesCommand(t, env, args...)
	if err != nil {
		t.Fatalf("s3cond leases %s: %v\n%s%s", strings.Join(args, " "), err, stdout, stderr)
	}
	return stdout, stderr
}

// heldRow lists the held rows as JSON and returns the one of path.
func heldRow(t *testing.T, env []string, path string, args ...string) (leaseRowJSON, string) {
	t.Helper()
	stdout, stderr := mustLeasesCommand(t, env, append([]string{"list", "--held", "--json", "--prefix", path}, args...)...)
	var rows []leaseRowJSON
	if err := json.Unmarshal([]byte(stdout), &rows); err != nil {
		t.Fatalf("leases list --json: %v\n%s", err, stdout)
	}
	for _, r := range rows {
		if r.Path == path && r.ETag == "*" {
			return r, stderr
		}
	}
	t.Fatalf("no held row %q in %s", path, stdout)
	return leaseRowJSON{}, ""
}

// startHeldUpload starts a conditional create through endpoint that sends
// all of its body but the last byte, and waits until until says its lease
// row is there. The body is small enough for s3cond to read it whole
// before sending it, so the lease is sought beside the fail-fast HEAD and
// held while the body trickles in (a streamed body's lease is sought only
// once it is all in). The upload's error arrives on the channel once the
// process is gone: call the returned func after killing it, to stop
// feeding the body and wait for the client to give up.
func startHeldUpload(t *testing.T, e *Env, endpoint, path string, until func() bool) (abandon func()) {
	t.Helper()
	const size = 32 << 10
	body, feed := io.Pipe()
	t.Cleanup(func() { feed.CloseWithError(errors.New("test over")) })
	done := make(chan error, 1)
	go func() {
		_, err := DoContext(t.Context(), endpoint, e.RW, RawRequest{Method: http.MethodPut, Path: "/" + path,
			Header: http.Header{"If-None-Match": {"*"}}, BodyFrom: body, ContentLength: size, PayloadHash: UnsignedPayload})
		done <- err
	}()
	if _, err := feed.Write(PatternBytes(11, size-1)); err != nil {
		t.Fatalf("feed the holder all but the last byte: %v", err)
	}
	waitUntil(t, "the holder's lease row", 10*time.Second, until)
	return func() {
		feed.CloseWithError(errors.New("holder killed"))
		<-done
	}
}

func conditionalCreate(t *testing.T, e *Env, endpoint, path, body string) *RawResponse {
	t.Helper()
	return Do(t, endpoint, e.RW, RawRequest{Method: http.MethodPut, Path: "/" + path,
		Header: http.Header{"If-None-Match": {"*"}}, Body: []byte(body)})
}

// TestLeasesReleaseEmbeddedAfterKill: s3cond on the embedded lease store
// is SIGKILLed in the middle of a conditional create. `s3cond leases list
// --held` shows the dead holder's row with its owner and age (from the
// file while no s3cond runs, through the admin listener while the restarted
// one holds it); the restarted s3cond makes writers wait the row out (409
// within the wait budget). `leases release`, run while it runs, goes
// through its admin listener with the token it wrote to data_dir at start:
// a wrong token is refused and writes nothing, the right one frees the row
// at the generation listed, after which the next conditional write takes
// it over at once, as a released lease. A graceful stop removes the token.
func TestLeasesReleaseEmbeddedAfterKill(t *testing.T) {
	e := NewEnv(t, WithConfig(leasesCLIConfig))
	e.RequireProxy(t)
	CreateBucket(t, e.Client(t, e.RW), "leases")
	cfg := e.Config
	cfg.DataDir = filepath.Join(t.TempDir(), "data")
	cfg.Server.Listen = testservers.FreeAddr(t)
	text, err := cfg.YAML()
	if err != nil {
		t.Fatal(err)
	}
	adminAddr := testservers.FreeAddr(t)
	adminEnv := "S3COND_ADMIN_LISTEN=" + adminAddr
	p := testservers.StartS3cond(t, text, append(e.processEnv, adminEnv)...)
	env := append(e.processEnv, adminEnv)
	tokenFile := filepath.Join(cfg.DataDir, "admin-token")
	killedToken := readAdminToken(t, tokenFile)

	const path = "leases/held"
	abandonUpload := startHeldUpload(t, e, p.Endpoint, path, func() bool {
		out, _, err := leasesCommand(t, env, "list", "--held", "--json", "--admin", adminAddr, "--admin-token-file", tokenFile)
		return err == nil && strings.Contains(out, `"path": "`+path+`"`)
	})
	killedPID := p.Process.Pid()
	p.Process.Kill()
	abandonUpload()

	// No s3cond runs: the file itself is read.
	table, stderr := mustLeasesCommand(t, env, "list", "--held", "--config", p.ConfigPath)
	if !strings.Contains(stderr, "from lease file") {
		t.Fatalf("list with no s3cond running did not read the lease file: %s", stderr)
	}
	line := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(path) + `\s+\*\s+(\d+)\s+(\S+)\s+(\d+s)\s+held\s+\d+s$`).FindStringSubmatch(table)
	if line == nil || !strings.Contains(line[2], fmt.Sprintf(":%d#", killedPID)) {
		t.Fatalf("leases list --held does not show %s held by the killed process (pid %d) with its age:\n%s", path, killedPID, table)
	}
	dead, _ := heldRow(t, env, path, "--config", p.ConfigPath)

	// The restarted s3cond holds the file: list reads through its admin
	// listener, and the dead holder's lease still blocks writers.
	p.Restart(t)
	if token := readAdminToken(t, tokenFile); token == killedToken {
		t.Fatal("the restarted s3cond kept the killed one's admin token")
	}
	again, stderr := heldRow(t, env, path, "--config", p.ConfigPath)
	if !strings.Contains(stderr, "from admin listener") || again.Owner != dead.Owner || again.Generation != dead.Generation {
		t.Fatalf("list while s3cond runs: %+v (%s), want %+v through the admin listener", again, stderr, dead)
	}
	if resp := conditionalCreate(t, e, p.Endpoint, path, "blocked"); resp.Status != http.StatusConflict {
		t.Fatalf("conditional create over the dead holder's lease: %d %s, want 409 within the wait budget", resp.Status, resp.shortBody())
	}

	// The killed run's token, still on disk elsewhere, is refused.
	staleToken := filepath.Join(t.TempDir(), "admin-token")
	if err := os.WriteFile(staleToken, []byte(killedToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	generation := fmt.Sprint(dead.Generation)
	if _, stderr, err := leasesCommand(t, env, "release", "--force", path, "--generation", generation, "--yes",
		"--admin", adminAddr, "--admin-token-file", staleToken); err == nil || !strings.Contains(stderr, "401") {
		t.Fatalf("release with the killed run's token: %v %s, want 401", err, stderr)
	}
	if still, _ := heldRow(t, env, path, "--config", p.ConfigPath); still.Generation != dead.Generation {
		t.Fatalf("a refused release moved the row: %+v, want generation %d", still, dead.Generation)
	}

	out, stderr := mustLeasesCommand(t, env, "release", "--force", path, "--generation", generation, "--yes", "--config", p.ConfigPath)
	if !strings.Contains(out, "released "+path) || !strings.Contains(out, fmt.Sprintf("generation %d -> %d", dead.Generation, dead.Generation+1)) {
		t.Fatalf("release while s3cond runs: %s%s", out, stderr)
	}
	// A wait would be timeout × skew = 60 s, past the 2 s wait budget: a
	// 200 means the write did not wait the dead holder out.
	if resp := conditionalCreate(t, e, p.Endpoint, path, "after release"); resp.Status != http.StatusOK {
		t.Fatalf("conditional create after the release: %d %s, want 200 within the wait budget", resp.Status, resp.shortBody())
	}
	metrics := scrape(t, "http://"+adminAddr+"/metrics")
	if !strings.Contains(metrics, `s3cond_lease_takeovers_total{kind="released"} 1`+"\n") ||
		strings.Contains(metrics, `s3cond_lease_takeovers_total{kind="stale"} 1`) {
		t.Fatalf("the write after the release was not one takeover of a released lease:\n%s", grepLines(metrics, "lease_takeovers"))
	}
	if got := getBytes(t, t.Context(), e.BackendClient(), "leases", "held"); string(got) != "after release" {
		t.Fatalf("key holds %q", got)
	}

	p.Process.Stop()
	if _, err := os.Stat(tokenFile); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("admin token file after a graceful stop: %v, want it removed", err)
	}
}

// readAdminToken reads the admin token a running s3cond wrote, checking
// that only its user can read it.
func readAdminToken(t *testing.T, path string) string {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("admin token file %s: %v, %v; want mode 0600", path, info, err)
	}
	token, err := os.ReadFile(path)
	if err != nil || len(strings.TrimSpace(string(token))) < 64 {
		t.Fatalf("admin token %s: %q, %v; want 32 bytes in hex", path, token, err)
	}
	return strings.TrimSpace(string(token))
}

// TestLeasesReleaseWhileFleetRuns: a fleet on a shared lease store; the
// holder is SIGKILLed mid-write. While the others run, `leases list
// --held` reads the row from the store with the config's settings, a
// writer through another process waits it out (409 within its budget), and
// `leases release` frees it through the store, after which that writer's
// next conditional create proceeds at once.
func TestLeasesReleaseWhileFleetRuns(t *testing.T) {
	t.Run("etcd", func(t *testing.T) { testLeasesReleaseWhileFleetRuns(t, newEtcdFleet, "lease store etcd") })
	t.Run("dynamodb", func(t *testing.T) { testLeasesReleaseWhileFleetRuns(t, newFleet, "lease store dynamodb") })
}

func testLeasesReleaseWhileFleetRuns(t *testing.T, fleet fleetStarter, via string) {
	e, _ := fleet(t, BackendVersityGW, WithConfig(leasesCLIConfig))
	holder, other := e.Proxies[0], e.Proxies[1]
	env := e.processEnv
	const path = "race/fleet-held"
	abandonUpload := startHeldUpload(t, e, holder.Endpoint, path, func() bool {
		out, _, err := leasesCommand(t, env, "list", "--held", "--json", "--config", other.ConfigPath)
		return err == nil && strings.Contains(out, `"path": "`+path+`"`)
	})
	killedPID := holder.Process.Pid()
	holder.Process.Kill()
	abandonUpload()

	dead, stderr := heldRow(t, env, path, "--config", other.ConfigPath)
	if !strings.Contains(stderr, via) || !strings.Contains(dead.Owner, fmt.Sprintf(":%d#", killedPID)) || dead.AgeSeconds == nil {
		t.Fatalf("held row %+v (%s), want the killed process's (pid %d) with an age, read from the %s", dead, stderr, killedPID, via)
	}
	show, _ := mustLeasesCommand(t, env, "show", path, "--config", other.ConfigPath)
	if !strings.Contains(show, "state       held") || !strings.Contains(show, dead.Owner) {
		t.Fatalf("leases show:\n%s", show)
	}
	if resp := conditionalCreate(t, e, other.Endpoint, path, "blocked"); resp.Status != http.StatusConflict {
		t.Fatalf("conditional create over the dead holder's lease: %d %s, want 409 within the wait budget", resp.Status, resp.shortBody())
	}
	// A generation the row has left (as after a renewal) releases nothing.
	if _, stderr, err := leasesCommand(t, env, "release", "--force", path, "--generation", fmt.Sprint(dead.Generation+1), "--yes",
		"--config", other.ConfigPath); err == nil || !strings.Contains(stderr, "not released") {
		t.Fatalf("release at a generation the row is not at: %v %s", err, stderr)
	}
	out, _ := mustLeasesCommand(t, env, "release", "--force", path, "--generation", fmt.Sprint(dead.Generation), "--yes", "--config", other.ConfigPath)
	if !strings.Contains(out, "released "+path) {
		t.Fatalf("release: %s", out)
	}
	if resp := conditionalCreate(t, e, other.Endpoint, path, "after release"); resp.Status != http.StatusOK {
		t.Fatalf("conditional create after the release: %d %s, want 200 within the wait budget", resp.Status, resp.shortBody())
	}
}

// grepLines keeps the lines of text that contain word.
func grepLines(text, word string) string {
	var kept []string
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, word) {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "\n")
}

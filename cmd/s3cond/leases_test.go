package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/internal/admin"
	"github.com/s3cond/s3cond/internal/config"
	"github.com/s3cond/s3cond/internal/leasestore"
)

func TestLeasesFlags(t *testing.T) {
	good := []struct {
		args []string
		want leasesFlags
	}{
		{[]string{"list", "--held", "--prefix", "b/logs/"}, leasesFlags{sub: "list", held: true, prefix: "b/logs/"}},
		{[]string{"list", "--admin", "127.0.0.1:9001", "--json"}, leasesFlags{sub: "list", admin: "127.0.0.1:9001", json: true}},
		{[]string{"show", "/b/k", "--etag", `"abc"`}, leasesFlags{sub: "show", path: "b/k", etag: `"abc"`}},
		// Flags after the key, as operators type them; the etag defaults to a create's.
		{[]string{"release", "b/dir/k", "--generation", "7", "--yes", "--config", "c.yaml"},
			leasesFlags{sub: "release", path: "b/dir/k", etag: "*", generation: 7, generationGiven: true, yes: true, config: "c.yaml"}},
		{[]string{"release", "--generation", "0", "--yes", "b/k"},
			leasesFlags{sub: "release", path: "b/k", etag: "*", generation: 0, generationGiven: true, yes: true}},
		// Through a running s3cond's admin listener; --config says where its token is.
		{[]string{"release", "b/k", "--generation", "3", "--yes", "--admin", "127.0.0.1:9001", "--config", "c.yaml"},
			leasesFlags{sub: "release", path: "b/k", etag: "*", generation: 3, generationGiven: true, yes: true, admin: "127.0.0.1:9001", config: "c.yaml"}},
		{[]string{"release", "b/k", "--generation", "3", "--yes", "--admin", "127.0.0.1:9001", "--admin-token-file", "/d/admin-token"},
			leasesFlags{sub: "release", path: "b/k", etag: "*", generation: 3, generationGiven: true, yes: true, admin: "127.0.0.1:9001", adminTokenFile: "/d/admin-token"}},
	}
	for _, tc := range good {
		got, err := parseLeasesFlags(tc.args, io.Discard)
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v, %v; want %+v", tc.args, got, err, tc.want)
		}
	}
	bad := []struct {
		args []string
		want string
	}{
		{nil, "usage:"},
		{[]string{"drop"}, `unknown leases command "drop"`},
		{[]string{"list", "b/k"}, "list takes --prefix"},
		{[]string{"list", "--config", "c.yaml", "--admin", "http://x"}, "exclude each other"},
		{[]string{"show"}, "needs one BUCKET/KEY"},
		{[]string{"show", "bucket-only"}, "is not BUCKET/KEY"},
		{[]string{"release", "b/k", "--yes"}, "needs --generation N"},
		{[]string{"release", "b/k", "--generation", "-1", "--yes"}, "invalid value"},
		{[]string{"release", "b/k", "--generation", "3"}, "needs --yes"},
		{[]string{"release", "b/k", "--generation", "3", "--yes", "--admin-token-file", "t"}, "goes with --admin URL"},
		{[]string{"list", "--admin-token-file", "t"}, "goes with --admin URL"},
		{[]string{"release", "b/k", "b/j", "--generation", "3", "--yes"}, "needs one BUCKET/KEY"},
	}
	for _, tc := range bad {
		_, err := parseLeasesFlags(tc.args, io.Discard)
		var usage usageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v; want a usage error saying %q", tc.args, err, tc.want)
		}
	}
}

func TestLeaseTableOutput(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	view := leaseView{leaseTTL: time.Hour, skewRate: 3, rows: []dynamolease.Record{
		// Last written 12 s ago with a 20 s timeout: 8 s left.
		{Path: "b/held", ETag: "*", Generation: 4, Timeout: 20 * time.Second, TTL: now.Add(time.Hour - 12*time.Second), Owner: "host:41#ab/3"},
		{Path: "b/done", ETag: `"e1"`, Generation: 9, Timeout: 20 * time.Second, TTL: now.Add(time.Hour - time.Minute), Owner: "host:41#ab/2", Released: true},
		// arrow-rs: no owner; by hand: no TTL; a key with a space.
		{Path: "b/arrow key", ETag: "*", Timeout: 5 * time.Second},
	}}
	var out bytes.Buffer
	if err := printLeaseTable(&out, view, now); err != nil {
		t.Fatal(err)
	}
	want := `PATH           ETAG  GENERATION  OWNER         AGE   STATE     LEFT
b/held         *     4           host:41#ab/3  12s   held      8s
b/done         "e1"  9           host:41#ab/2  1m0s  released  -
"b/arrow key"  *     0           -             ?     held      -
`
	if out.String() != want {
		t.Fatalf("table:\n%s\nwant:\n%s", out.String(), want)
	}
	out.Reset()
	printLeaseDetails(&out, leaseView{leaseTTL: time.Hour, skewRate: 3, rows: view.rows[:1]}, now)
	for _, line := range []string{"generation  4\n", "owner       host:41#ab/3\n", "state       held\n", "age         12s",
		"left        8s by the holder's own deadline; a contender takes it over 1m0s"} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("details lack %q:\n%s", line, out.String())
		}
	}
	out.Reset()
	if err := printLeaseJSON(&out, view, now); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"age_seconds": 12`, `"left_seconds": 8`, `"age_seconds": null`, `"owner": ""`} {
		if !strings.Contains(out.String(), field) {
			t.Errorf("JSON lacks %s:\n%s", field, out.String())
		}
	}
}

// leaseFile makes an embedded lease file in dir holding two rows of a dead
// holder, as a SIGKILLed s3cond leaves them, and returns it open as a
// serving s3cond opens it, and its closer.
func leaseFile(t *testing.T, dir string) (dynamolease.Table, func() error) {
	t.Helper()
	cfg, err := config.Load("", []string{"S3COND_DATA_DIR=" + dir})
	if err != nil {
		t.Fatal(err)
	}
	store, err := leasestore.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	tbl, err := store.Table(dynamolease.Options{}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"b/k", "b/j"} {
		if _, err := tbl.Create(context.Background(), dynamolease.Record{Path: path, ETag: "*", Generation: 2,
			Timeout: 20 * time.Second, TTL: writtenAgo(time.Minute), Owner: "killed:7#tok/1"}); err != nil {
			t.Fatal(err)
		}
	}
	return tbl, store.Close
}

// runningAdmin serves table's lease endpoints as a running s3cond's admin
// listener does, its token in dir.
func runningAdmin(t *testing.T, dir string, table dynamolease.Table) *httptest.Server {
	t.Helper()
	token, err := admin.CreateTokenFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+admin.LeasesPath, admin.LeasesHandler(table.(dynamolease.PageLister), token.Token, time.Hour, 3))
	mux.Handle(admin.LeaseReleasePath, admin.ReleaseHandler(table, token.Token, zerolog.Nop()))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// On the embedded store, list reads the file while no s3cond runs, and
// through the admin listener while one holds it; release goes through the
// admin listener with the token while one runs, and opens the file once
// it has stopped.
func TestLeasesOnTheEmbeddedStore(t *testing.T) {
	dir := t.TempDir()
	running, stopRunning := leaseFile(t, dir)
	adminSrv := runningAdmin(t, dir, running)
	adminAddr := strings.TrimPrefix(adminSrv.URL, "http://")
	env := []string{"S3COND_DATA_DIR=" + dir, "S3COND_ADMIN_LISTEN=" + adminAddr}

	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"leases", "list", "--held"}, env, &stdout, &stderr); err != nil {
		t.Fatalf("list while s3cond runs: %v", err)
	}
	if !strings.Contains(stdout.String(), "killed:7#tok/1") || !strings.Contains(stderr.String(), "from admin listener") {
		t.Fatalf("list while s3cond runs:\n%s%s", stdout.String(), stderr.String())
	}

	// While s3cond runs: a wrong token, or a generation the row has left,
	// writes nothing; the token in data_dir releases.
	wrongToken := filepath.Join(t.TempDir(), "admin-token")
	if err := os.WriteFile(wrongToken, []byte("0123abcd\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := runCmd(t, env, "leases", "release", "b/k", "--generation", "2", "--yes",
		"--admin", adminAddr, "--admin-token-file", wrongToken); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("release with a wrong token: %v, want 401", err)
	}
	_, err := runCmd(t, env, "leases", "release", "b/k", "--generation", "1", "--yes")
	if !errors.Is(err, dynamolease.ErrReleaseGeneration) || !strings.Contains(err.Error(), "not released: the row is now at generation 2") {
		t.Fatalf("release at a moved generation while s3cond runs: %v, want ErrReleaseGeneration with the row", err)
	}
	if row, _ := running.Get(context.Background(), "b/k", "*"); row == nil || row.Generation != 2 || row.Released {
		t.Fatalf("the refused releases wrote the row: %+v", row)
	}
	out, err := runCmd(t, env, "leases", "release", "b/k", "--generation", "2", "--yes")
	if err != nil || !strings.Contains(out, "generation 2 -> 3") {
		t.Fatalf("release while s3cond runs: %q, %v", out, err)
	}
	if out, err := runCmd(t, env, "leases", "release", "b/k", "--generation", "3", "--yes", "--admin", adminAddr); err != nil ||
		!strings.Contains(out, "already released at generation 3") {
		t.Fatalf("release again through --admin: %q, %v", out, err)
	}
	// Without the token file: a clear refusal, not a 401 from an empty token.
	if _, err := runCmd(t, []string{"S3COND_DATA_DIR=" + t.TempDir()}, "leases", "release", "b/j", "--generation", "2", "--yes",
		"--admin", adminAddr); err == nil || !strings.Contains(err.Error(), "admin-token") {
		t.Fatalf("release with no token file: %v", err)
	}

	if err := stopRunning(); err != nil {
		t.Fatal(err)
	}
	adminSrv.Close()

	stdout.Reset()
	stderr.Reset()
	if err := run(context.Background(), []string{"leases", "show", "b/j"}, env, &stdout, &stderr); err != nil {
		t.Fatalf("show once s3cond stopped: %v", err)
	}
	if !strings.Contains(stdout.String(), "generation  2") || !strings.Contains(stderr.String(), "from lease file") {
		t.Fatalf("show once s3cond stopped:\n%s%s", stdout.String(), stderr.String())
	}
	if _, err := runCmd(t, env, "leases", "release", "b/j", "--generation", "1", "--yes"); !errors.Is(err, dynamolease.ErrReleaseGeneration) {
		t.Fatalf("release at another generation: %v, want ErrReleaseGeneration", err)
	}
	out, err = runCmd(t, env, "leases", "release", "b/j", "--generation", "2", "--yes")
	if err != nil || !strings.Contains(out, "generation 2 -> 3") {
		t.Fatalf("release once s3cond stopped: %q, %v", out, err)
	}
	if out, err := runCmd(t, env, "leases", "list", "--held"); err != nil || strings.Contains(out, "b/") {
		t.Fatalf("list --held after the releases: %q, %v; want no row", out, err)
	}
}

// A token file the caller cannot read (s3cond's user alone can): the
// caller is told whose it is, and nothing is asked of the listener. A
// directory in the file's place stands for it, as no one, root included
// (CI runs as root), reads a directory as a file; a mode-0 file would be
// read by root.
func TestLeasesReleaseUnreadableToken(t *testing.T) {
	dir := t.TempDir()
	token := filepath.Join(dir, "admin-token")
	if err := os.Mkdir(token, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := runCmd(t, nil, "leases", "release", "b/k", "--generation", "2", "--yes", "--force",
		"--admin", "127.0.0.1:1", "--admin-token-file", token)
	if err == nil || !strings.Contains(err.Error(), "run as the s3cond user or root") {
		t.Fatalf("release with an unreadable token: %v", err)
	}
}

// lease.store memory: the rows live in the running s3cond, so release goes
// through its admin listener, found at admin.listen.
func TestLeasesReleaseOnTheMemoryStore(t *testing.T) {
	dir := t.TempDir()
	table := dynamolease.NewMemTable()
	if _, err := table.Create(context.Background(), dynamolease.Record{Path: "b/k", ETag: `"e1"`, Generation: 4,
		Timeout: 20 * time.Second, TTL: writtenAgo(time.Minute), Owner: "stuck:9#tok/1"}); err != nil {
		t.Fatal(err)
	}
	adminSrv := runningAdmin(t, dir, table)
	env := []string{"S3COND_DATA_DIR=" + dir, "S3COND_LEASE_STORE=memory", "S3COND_ADMIN_LISTEN=" + strings.TrimPrefix(adminSrv.URL, "http://")}
	out, err := runCmd(t, env, "leases", "release", "b/k", "--etag", `"e1"`, "--generation", "4", "--yes")
	if err != nil || !strings.Contains(out, "generation 4 -> 5") {
		t.Fatalf("release on the memory store: %q, %v", out, err)
	}
	if row, _ := table.Get(context.Background(), "b/k", `"e1"`); row == nil || !row.Released {
		t.Fatalf("row after the release: %+v", row)
	}
	if _, err := runCmd(t, append(env, "S3COND_ADMIN_LISTEN="), "leases", "release", "b/k", "--etag", `"e1"`, "--generation", "5", "--yes"); err == nil ||
		!strings.Contains(err.Error(), "admin.listen is off") {
		t.Fatalf("release with the admin listener off: %v", err)
	}
}

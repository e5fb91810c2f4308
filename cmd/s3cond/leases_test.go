package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/boltstore"
	"github.com/s3cond/s3cond/internal/admin"
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
		{[]string{"release", "b/k", "--generation", "3", "--yes", "--admin", "http://127.0.0.1:9001"}, "never goes through the admin listener"},
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

// leaseFile makes an embedded lease file in dir holding a dead holder's
// row, as a SIGKILLed s3cond leaves it, and returns the open table.
func leaseFile(t *testing.T, dir string) *boltstore.Table {
	t.Helper()
	tbl, err := boltstore.Open(filepath.Join(dir, "leases.db"), boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tbl.Close() })
	if _, err := tbl.Create(context.Background(), dynamolease.Record{Path: "b/k", ETag: "*", Generation: 2,
		Timeout: 20 * time.Second, TTL: time.Now().Add(time.Hour), Owner: "killed:7#tok/1"}); err != nil {
		t.Fatal(err)
	}
	return tbl
}

// On the embedded store, list reads the file while no s3cond runs, and
// through the admin listener while one holds it; release refuses while one
// runs, and then frees the row once it has stopped.
func TestLeasesOnTheEmbeddedStore(t *testing.T) {
	dir := t.TempDir()
	running := leaseFile(t, dir)
	adminSrv := httptest.NewServer(admin.LeasesHandler(running, time.Hour, 3))
	defer adminSrv.Close()
	env := []string{"S3COND_DATA_DIR=" + dir, "S3COND_ADMIN_LISTEN=" + strings.TrimPrefix(adminSrv.URL, "http://")}

	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"leases", "list", "--held"}, env, &stdout, &stderr); err != nil {
		t.Fatalf("list while s3cond runs: %v", err)
	}
	if !strings.Contains(stdout.String(), "killed:7#tok/1") || !strings.Contains(stderr.String(), "from admin listener") {
		t.Fatalf("list while s3cond runs:\n%s%s", stdout.String(), stderr.String())
	}
	_, err := runCmd(t, env, "leases", "release", "b/k", "--generation", "2", "--yes")
	if err == nil || !strings.Contains(err.Error(), "stop s3cond") {
		t.Fatalf("release while s3cond runs: %v, want a refusal telling to stop s3cond", err)
	}
	if err := running.Close(); err != nil {
		t.Fatal(err)
	}
	adminSrv.Close()

	stdout.Reset()
	stderr.Reset()
	if err := run(context.Background(), []string{"leases", "show", "b/k"}, env, &stdout, &stderr); err != nil {
		t.Fatalf("show once s3cond stopped: %v", err)
	}
	if !strings.Contains(stdout.String(), "generation  2") || !strings.Contains(stderr.String(), "from lease file") {
		t.Fatalf("show once s3cond stopped:\n%s%s", stdout.String(), stderr.String())
	}
	if _, err := runCmd(t, env, "leases", "release", "b/k", "--generation", "1", "--yes"); !errors.Is(err, dynamolease.ErrReleaseGeneration) {
		t.Fatalf("release at another generation: %v, want ErrReleaseGeneration", err)
	}
	out, err := runCmd(t, env, "leases", "release", "b/k", "--generation", "2", "--yes")
	if err != nil || !strings.Contains(out, "generation 2 -> 3") {
		t.Fatalf("release once s3cond stopped: %q, %v", out, err)
	}
	if out, err := runCmd(t, env, "leases", "list", "--held"); err != nil || strings.Contains(out, "b/k") {
		t.Fatalf("list --held after the release: %q, %v; want no row", out, err)
	}
}

package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/s3cond/s3cond/internal/testservers"
)

func TestProbeNeedsABucketAndAStore(t *testing.T) {
	for _, args := range [][]string{
		{"probe", "--endpoint", "http://127.0.0.1:1"},
		{"probe", "--bucket", "b"},
		{"probe", "--bucket", "b", "--endpoint", "http://127.0.0.1:1", "--writers", "1"},
	} {
		_, err := runCmd(t, nil, args...)
		var usage usageError
		if !errors.As(err, &usage) {
			t.Errorf("s3cond %s: %v, want a usage error", strings.Join(args, " "), err)
		}
	}
}

// The verdict is the output, not the exit status: a store that ignores
// every condition is probed successfully.
func TestProbePrintsJSONAndSucceedsOnABadStore(t *testing.T) {
	endpoint := testservers.StartFaultyStore(t, testservers.IgnoringStore)
	out, err := runCmd(t, nil, "probe", "--json", "--endpoint", endpoint, "--access-key-id", "k", "--secret-access-key", "s",
		"--bucket", testservers.FaultyStoreBucket, "--writers", "2", "--rounds", "1")
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	var rep struct {
		Capabilities   map[string]struct{ Verdict string }
		Recommendation string
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Recommendation != "lease" || rep.Capabilities["put_if_none_match"].Verdict != "ignored" {
		t.Fatalf("probe --json: %v\n%s", err, out)
	}
}

// check-config shows what the start-up probe will find.
func TestCheckConfigShowsTheStartupProbe(t *testing.T) {
	endpoint := testservers.StartFaultyStore(t, testservers.NewPutOnlyStore)
	path := filepath.Join(t.TempDir(), "s3cond.yaml")
	cfg := "backend:\n  type: s3\n  endpoint: " + endpoint + "\n  credentials:\n    source: static\n    access_key_id: k\n    secret_access_key: s\n" +
		"  conditional: auto\n  probe_bucket: " + testservers.FaultyStoreBucket + "\n" +
		"keys:\n  - access_key_id: c\n    secret: client-secret\n    buckets: [\"*\"]\n    access: read-write\n"
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runCmd(t, nil, "check-config", "--config", path)
	if err != nil {
		t.Fatalf("check-config: %v\n%s", err, out)
	}
	for _, want := range []string{"# backend default (conditional: auto)", "# delete_if_match", "ignored", "# recommendation: backend.conditional: lease"} {
		if !strings.Contains(out, want) {
			t.Errorf("check-config output lacks %q:\n%s", want, out)
		}
	}
}

// The probe command applies the known-racy table as serve does: a store
// naming itself SeaweedFS is racy for the capabilities measured racy on
// it, though every race of this run went well; the same store, nameless,
// is native for them.
func TestProbeAppliesTheKnownRacyTable(t *testing.T) {
	for _, tc := range []struct {
		server, want string
	}{{"SeaweedFS 30GB 4.53", "racy"}, {"", "native"}} {
		store := testservers.NewAtomicStore
		if tc.server != "" {
			store = testservers.NamedStore(tc.server, testservers.NewAtomicStore)
		}
		endpoint := testservers.StartFaultyStore(t, store)
		out, err := runCmd(t, nil, "probe", "--json", "--endpoint", endpoint, "--access-key-id", "k", "--secret-access-key", "s",
			"--bucket", testservers.FaultyStoreBucket, "--writers", "2", "--rounds", "1")
		if err != nil {
			t.Fatalf("probe: %v", err)
		}
		var rep struct {
			Capabilities map[string]struct{ Verdict string }
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("probe --json: %v\n%s", err, out)
		}
		if got := rep.Capabilities["copy_if_match"].Verdict; got != tc.want {
			t.Errorf("Server %q: copy_if_match %q, want %q\n%s", tc.server, got, tc.want, out)
		}
	}
}

package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
)

// writtenAgo is the TTL of a row last written d ago with the default
// lease.ttl (1 h): what every write sets it to.
func writtenAgo(d time.Duration) time.Time { return time.Now().Add(time.Hour - d) }

// A row its holder wrote within lease.timeout (20 s) is a live holder's:
// release refuses it, says so, and writes nothing; --force releases it
// (issue 33 finding 5: a released live holder answered its copy 200 after
// a second writer's create). A row written longer ago is released as
// before. Without the check (--force always) the first release would land.
func TestLeasesReleaseRefusesALiveHolderUnlessForced(t *testing.T) {
	dir := t.TempDir()
	table := dynamolease.NewMemTable()
	for path, ttl := range map[string]time.Time{"b/live": writtenAgo(2 * time.Second), "b/dead": writtenAgo(time.Minute)} {
		if _, err := table.Create(context.Background(), dynamolease.Record{Path: path, ETag: "*", Generation: 4,
			Timeout: 20 * time.Second, TTL: ttl, Owner: "holder:9#tok/1"}); err != nil {
			t.Fatal(err)
		}
	}
	// A sized lease (a copy's, 5 min) is renewed only at half its length:
	// written a minute ago, its holder is alive.
	if _, err := table.Create(context.Background(), dynamolease.Record{Path: "b/copying", ETag: "*", Generation: 4,
		Timeout: 5 * time.Minute, TTL: writtenAgo(time.Minute), Owner: "holder:9#tok/2"}); err != nil {
		t.Fatal(err)
	}
	adminSrv := runningAdmin(t, dir, table)
	env := []string{"S3COND_DATA_DIR=" + dir, "S3COND_LEASE_STORE=memory", "S3COND_ADMIN_LISTEN=" + strings.TrimPrefix(adminSrv.URL, "http://")}

	if _, err := runCmd(t, env, "leases", "release", "b/copying", "--generation", "4", "--yes"); !errors.Is(err, errLiveHolder) {
		t.Fatalf("release of a sized row written a minute ago: %v; want a refusal", err)
	}

	_, err := runCmd(t, env, "leases", "release", "b/live", "--generation", "4", "--yes")
	if !errors.Is(err, errLiveHolder) || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("release of a row written 2 s ago: %v; want a refusal naming --force", err)
	}
	if row, _ := table.Get(context.Background(), "b/live", "*"); row == nil || row.Released || row.Generation != 4 {
		t.Fatalf("the refused release wrote the row: %+v", row)
	}
	if out, err := runCmd(t, env, "leases", "release", "b/live", "--generation", "4", "--yes", "--force"); err != nil || !strings.Contains(out, "generation 4 -> 5") {
		t.Fatalf("forced release: %q, %v", out, err)
	}
	if out, err := runCmd(t, env, "leases", "release", "b/dead", "--generation", "4", "--yes"); err != nil || !strings.Contains(out, "generation 4 -> 5") {
		t.Fatalf("release of a row written a minute ago: %q, %v", out, err)
	}
}

// A sized row's TTL outlasts its takeover wait (2 × its timeout × skew when
// that exceeds lease.ttl): its age is read off that, not lease.ttl, or a
// sized lease written 30 s ago would read as written just now.
func TestLeaseAgeOfASizedRow(t *testing.T) {
	now := time.Now()
	view := leaseView{leaseTTL: time.Hour, skewRate: 3}
	sized := dynamolease.Record{Timeout: 20 * time.Minute, TTL: now.Add(2*time.Hour - 30*time.Second)}
	if age, ok := leaseAge(sized, view, now); !ok || age != 30*time.Second {
		t.Fatalf("age of a sized row written 30 s ago: %s, %v", age, ok)
	}
	plain := dynamolease.Record{Timeout: 20 * time.Second, TTL: now.Add(time.Hour - 30*time.Second)}
	if age, ok := leaseAge(plain, view, now); !ok || age != 30*time.Second {
		t.Fatalf("age of a plain row written 30 s ago: %s, %v", age, ok)
	}
}

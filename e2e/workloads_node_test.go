package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/s3cond/s3cond/internal/testservers"
)

// workloadEnv is s3cond in front of s3rver as the workloads run it: two
// s3cond processes sharing a lease table (dynalite), JSON logs so the test
// can read the access log.
func workloadEnv(t *testing.T, bucket string) *Env {
	t.Helper()
	e := NewEnv(t, WithBackend(BackendS3rver), WithDynamoDBLeases(testservers.StartDynalite(t)), WithProxies(2),
		WithConfig(func(c *Config) { c.Log.Format = "json" }))
	CreateBucket(t, e.Client(t, e.RW), bucket)
	return e
}

func (e *Env) proxyEndpoints() []string {
	var out []string
	for _, p := range e.Proxies {
		out = append(out, p.Endpoint)
	}
	return out
}

// runNodeScript runs one of e2e/node's scripts with cred in the
// environment and returns its stdout; a failed run fails the test.
func runNodeScript(t *testing.T, cred Credentials, script string, args ...string) string {
	t.Helper()
	dir, err := filepath.Abs("node")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{script}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(clientEnv(cred), "NODE_NO_WARNINGS=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s %s: %v\nstdout: %s\nstderr: %s", script, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

const (
	lanceWriters = 3
	lanceAppends = 8
)

// runLanceWriters creates the table, then runs lanceWriters processes at
// once, writer i on endpoints[i % len], each appending lanceAppends tagged
// rows. It returns the acknowledged and the failed tags.
func runLanceWriters(t *testing.T, endpoints []string, cred Credentials, uri string) (acked, failed []string) {
	t.Helper()
	runNodeScript(t, cred, "lancedb_append.mjs", "create", endpoints[0], uri)
	outs := make([]string, lanceWriters)
	// The writers start appending at one moment, so that they contend even
	// if Node starts them one after another on a busy machine.
	startAt := fmt.Sprint(time.Now().Add(3 * time.Second).UnixMilli())
	var wg sync.WaitGroup
	for i := range lanceWriters {
		wg.Go(func() {
			outs[i] = runNodeScript(t, cred, "lancedb_append.mjs", "append", endpoints[i%len(endpoints)], uri,
				fmt.Sprintf("w%d", i), fmt.Sprint(lanceAppends), startAt)
		})
	}
	wg.Wait()
	for _, out := range outs {
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			switch fields := strings.Fields(line); {
			case len(fields) >= 2 && fields[0] == "acked":
				acked = append(acked, fields[1])
			case len(fields) >= 2 && fields[0] == "failed":
				failed = append(failed, fields[1])
				t.Logf("append %s failed: %s", fields[1], line)
			}
		}
	}
	return acked, failed
}

// readLanceTags counts each tag in the table.
func readLanceTags(t *testing.T, endpoint string, cred Credentials, uri string) map[string]int {
	t.Helper()
	var tags []string
	out := runNodeScript(t, cred, "lancedb_append.mjs", "read", endpoint, uri)
	if err := json.Unmarshal([]byte(out), &tags); err != nil {
		t.Fatalf("read table: %v\n%s", err, out)
	}
	counts := map[string]int{}
	for _, tag := range tags {
		counts[tag]++
	}
	return counts
}

// lancedbThroughS3cond: three Node processes append to one table through
// two s3cond processes on s3rver; every acknowledged append is in the
// table exactly once, a failed one not at all, and the access log shows
// Lance's conditional commits and the 412s it recovered from.
func lancedbThroughS3cond(t *testing.T) {
	e := workloadEnv(t, "lance")
	acked, failed := runLanceWriters(t, e.proxyEndpoints(), e.RW, "s3://lance/db")
	counts := readLanceTags(t, e.Endpoint, e.RW, "s3://lance/db")
	t.Logf("through s3cond: %d appends acknowledged, %d failed; table holds %d distinct tags", len(acked), len(failed), len(counts))
	requireAppendsExactlyOnce(t, acked, failed, counts)
	if len(acked) < lanceWriters*lanceAppends/2 {
		t.Errorf("only %d of %d appends were acknowledged", len(acked), lanceWriters*lanceAppends)
	}
	summary := accessLogSummary(t, e, "lance")
	t.Logf("what s3cond saw of Lance (operation key-pattern status conditional-outcome: count):\n%s", strings.Join(summary.lines(), "\n"))
	if summary.conditional["committed"] == 0 || summary.conditional["precondition_failed"] == 0 {
		t.Errorf("want Lance's commits as conditional writes, some refused with 412: conditional outcomes %v", summary.conditional)
	}
}

func requireAppendsExactlyOnce(t *testing.T, acked, failed []string, counts map[string]int) {
	t.Helper()
	for _, tag := range acked {
		if counts[tag] != 1 {
			t.Errorf("acknowledged append %s is in the table %d times", tag, counts[tag])
		}
	}
	for _, tag := range failed {
		if counts[tag] != 0 {
			t.Errorf("failed append %s is in the table %d times", tag, counts[tag])
		}
	}
	if counts["seed"] != 1 {
		t.Errorf("the seed row is in the table %d times", counts["seed"])
	}
}

// lancedbStraightOnS3rver is the control: the same appends straight on
// s3rver lose acknowledged rows (writers overwrite each other's manifest).
func lancedbStraightOnS3rver(t *testing.T) {
	store := testservers.StartS3rver(t, "lance")
	cred := Credentials{store.AccessKey, store.Secret}
	acked, _ := runLanceWriters(t, []string{store.Endpoint}, cred, "s3://lance/db")
	counts := readLanceTags(t, store.Endpoint, cred, "s3://lance/db")
	var lost []string
	for _, tag := range acked {
		if counts[tag] != 1 {
			lost = append(lost, tag)
		}
	}
	t.Logf("straight on s3rver: %d appends acknowledged, %d of them not in the table exactly once: %v", len(acked), len(lost), lost)
	if len(lost) == 0 {
		t.Fatal("every acknowledged append is in the table straight on s3rver: the control measured nothing")
	}
}

// accessLog is what s3cond's access log says of one bucket's requests.
type accessLog struct {
	counts      map[string]int // "operation key-pattern status conditional" → requests
	conditional map[string]int // conditional outcome → requests
}

func (a accessLog) lines() []string {
	var out []string
	for k, n := range a.counts {
		out = append(out, fmt.Sprintf("  %s: %d", k, n))
	}
	slices.Sort(out)
	return out
}

// keyPattern hides the parts of a key that differ between writes: version
// numbers, UUIDs, hashes.
var keyPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f-]{27}|[0-9a-fA-F_-]{12,}|[0-9]+`)

// accessLogSummary reads the JSON access log of every s3cond process.
func accessLogSummary(t *testing.T, e *Env, bucket string) accessLog {
	t.Helper()
	sum := accessLog{counts: map[string]int{}, conditional: map[string]int{}}
	for _, p := range e.Proxies {
		for _, line := range strings.Split(p.Process.Output(), "\n") {
			var rec struct {
				Message, Bucket, Key, Operation, Conditional string
				Status                                       int
			}
			if json.Unmarshal([]byte(line), &rec) != nil || rec.Message != "request" || rec.Bucket != bucket {
				continue
			}
			key := keyPattern.ReplaceAllString(rec.Key, "*")
			sum.counts[fmt.Sprintf("%s %s %d %s", rec.Operation, key, rec.Status, rec.Conditional)]++
			if rec.Conditional != "" {
				sum.conditional[rec.Conditional]++
			}
		}
	}
	return sum
}

// sdkRaceOutcome is one racer's result from e2e/node/sdk_create_race.mjs.
type sdkRaceOutcome struct {
	Racer   int
	OK      bool
	Status  int
	Code    string
	Message string
}

const sdkRacers = 4

// sdkCreateRace runs the helper's create race and returns the outcomes.
func sdkCreateRace(t *testing.T, helper, endpoint string, cred Credentials, bucket, key string, size int) []sdkRaceOutcome {
	t.Helper()
	out := runNodeScript(t, cred, "sdk_create_race.mjs", helper, endpoint, bucket, key, fmt.Sprint(sdkRacers), fmt.Sprint(size))
	var outcomes []sdkRaceOutcome
	if err := json.Unmarshal([]byte(out), &outcomes); err != nil {
		t.Fatalf("%s race: %v\n%s", helper, err, out)
	}
	return outcomes
}

// sdkRaceThroughS3cond: exactly one racer creates the key, the others get
// 412 PreconditionFailed (or 409), and the key holds the winner's body.
func sdkRaceThroughS3cond(helper string, size int) func(t *testing.T) {
	return func(t *testing.T) {
		e := workloadEnv(t, "race")
		outcomes := sdkCreateRace(t, helper, e.Endpoint, e.RW, "race", "created", size)
		t.Logf("%s through s3cond: %+v", helper, outcomes)
		winner := -1
		for _, o := range outcomes {
			switch {
			case o.OK && winner >= 0:
				t.Errorf("racers %d and %d both created the key", winner, o.Racer)
			case o.OK:
				winner = o.Racer
			case o.Code != "PreconditionFailed" && o.Code != "ConditionalRequestConflict":
				t.Errorf("racer %d: %d %s %s; want PreconditionFailed", o.Racer, o.Status, o.Code, o.Message)
			}
		}
		if winner < 0 {
			t.Fatal("no racer created the key")
		}
		stored := getBytes(t, t.Context(), e.BackendClient(), "race", "created")
		if want := fmt.Sprintf("racer %d|", winner); !bytes.HasPrefix(stored, []byte(want)) || len(stored) != size {
			t.Errorf("key holds %d bytes starting %q; want racer %d's %d bytes", len(stored), stored[:min(len(stored), 16)], winner, size)
		}
	}
}

// sdkRaceStraightOnS3rver is the control: more than one racer is told it
// created the key.
func sdkRaceStraightOnS3rver(helper string, size int) func(t *testing.T) {
	return func(t *testing.T) {
		store := testservers.StartS3rver(t, "race")
		outcomes := sdkCreateRace(t, helper, store.Endpoint, Credentials{store.AccessKey, store.Secret}, "race", "created", size)
		winners := 0
		for _, o := range outcomes {
			if o.OK {
				winners++
			}
		}
		t.Logf("%s straight on s3rver: %d of %d racers created the key", helper, winners, len(outcomes))
		if winners <= 1 {
			t.Fatalf("%d racers created the key straight on s3rver: the control measured nothing", winners)
		}
	}
}

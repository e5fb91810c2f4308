package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/s3cond/s3cond/internal/testservers"
)

// workload is one real tool's use of conditional writes, run through
// s3cond in front of s3rver (a store that ignores If-None-Match and
// If-Match) and, as the control, straight against s3rver, where it must
// lose writes. docs/workloads.md is generated from the run.
type workload struct {
	id, title string
	// checks says what the run through s3cond asserts; control what the
	// run straight on s3rver must show.
	checks, control string
	// note is what the tool sends and how it reacts, for the document.
	note           string
	throughS3cond  func(t *testing.T)
	straightS3rver func(t *testing.T)
}

func workloads() []workload {
	return []workload{
		{id: "terraform", title: "Terraform / OpenTofu S3 state locking (`use_lockfile = true`)",
			checks: "3 processes × 40 state writes, each under the lock, through 2 s3cond processes sharing a lease table, " +
				"over HTTPS (SHA-256 as an aws-chunked trailer): never two holders (an O_EXCL file held while locked), " +
				"final state serial = number of writes, a refused lock is 412 PreconditionFailed with the holder's Lock Info",
			control: "3 processes × 15 state writes straight on s3rver: two holders at once, or lost state writes",
			note: "Replayed by e2e/terraformlock with aws-sdk-go-v2 and its upload/download managers, as " +
				"internal/backend/remote-state/s3/client.go does: lock = PutObject `<key>.tflock` with `If-None-Match: *` " +
				"and a SHA-256 checksum; on failure a GetObject of the lock for the holder's info; state = HeadObject + " +
				"GetObject (download manager), PutObject (upload manager, SHA-256); unlock = GetObject of the lock, " +
				"compare its ID, unconditional DeleteObject. The SDK module versions are this repository's, not " +
				"Terraform's (see docs/recipes/terraform.md).",
			throughS3cond: terraformThroughS3cond, straightS3rver: terraformStraightOnS3rver},
		{id: "lancedb", title: "LanceDB concurrent appends (`@lancedb/lancedb` 0.31.0)",
			checks: "3 Node processes × 8 `table.add()` of tagged rows to one table on `s3://`, through 2 s3cond processes: " +
				"every acknowledged append is in the table exactly once, a failed one not at all; the access log shows " +
				"Lance's commits as conditional writes, some refused with 412",
			control: "the same appends straight on s3rver: acknowledged rows missing (writers overwrite each other's manifest)",
			note: "e2e/node/lancedb_append.mjs. Lance (Rust object_store inside) writes data files and transaction files " +
				"unconditionally, and commits each table version by creating `_versions/<n>.manifest` with " +
				"`If-None-Match: *`; on 412 it reads the newer versions, rebases its append and commits the next " +
				"version (see docs/recipes/lancedb.md).",
			throughS3cond: lancedbThroughS3cond, straightS3rver: lancedbStraightOnS3rver},
		{id: "lib-storage", title: "`@aws-sdk/lib-storage` `Upload` (multipart) with `IfNoneMatch: \"*\"`",
			checks: "4 concurrent 6 MiB Uploads (a 5 MiB and a 1 MiB part each) of one key: exactly one succeeds, the others get 412, " +
				"the key holds the winner's bytes",
			control: "the same race straight on s3rver: more than one Upload succeeds",
			note: "e2e/node/sdk_create_race.mjs. Upload passes IfNoneMatch on to CompleteMultipartUpload, where s3cond " +
				"takes the lease. A loser's Upload then sends AbortMultipartUpload, which s3rver refuses (405): its parts " +
				"stay in s3rver, and s3rver cannot list them either (no ListMultipartUploads).",
			throughS3cond:  sdkRaceThroughS3cond("lib-storage", 6<<20),
			straightS3rver: sdkRaceStraightOnS3rver("lib-storage", 6<<20)},
		{id: "minio-js", title: "minio-js (`minio` 8.0.7) `putObject` with `If-None-Match: *`",
			checks: "4 concurrent putObject calls of one key with an `If-None-Match: *` header: exactly one succeeds, the " +
				"others get 412, the key holds the winner's bytes",
			control: "the same race straight on s3rver: more than one putObject succeeds",
			note: "e2e/node/sdk_create_race.mjs. minio-js sends If-None-Match and If-Match given in putObject's metadata " +
				"argument as headers.",
			throughS3cond:  sdkRaceThroughS3cond("minio", 64<<10),
			straightS3rver: sdkRaceStraightOnS3rver("minio", 64<<10)},
	}
}

// Cells of the workloads table.
const (
	workloadPass       = "pass"
	workloadFail       = "FAIL"
	workloadLost       = "writes lost (as expected)"
	workloadControlBad = "FAIL (no write lost: the control measured nothing)"
)

// TestWorkloads runs every workload through s3cond and straight on
// s3rver, then compares docs/workloads.md with the run, or rewrites it
// when S3COND_WRITE_COMPAT=1.
func TestWorkloads(t *testing.T) {
	if TargetMode() == ModeDirect {
		t.Skip("the workloads check s3cond against s3rver; S3COND_E2E_TARGET=direct runs clients against versitygw")
	}
	var mu sync.Mutex
	cells := map[string]string{}
	set := func(key, value string) {
		mu.Lock()
		defer mu.Unlock()
		cells[key] = value
	}
	all := workloads()
	for _, w := range all {
		t.Run(w.id, func(t *testing.T) {
			// A skipped half (-short, a program not installed) leaves its
			// cell empty, so the document is not compared.
			if passed, skipped := runSubtest(t, "s3cond", w.throughS3cond); !skipped {
				set(w.id+"/s3cond", map[bool]string{true: workloadPass, false: workloadFail}[passed])
			}
			if passed, skipped := runSubtest(t, "s3rver-direct", w.straightS3rver); !skipped {
				set(w.id+"/direct", map[bool]string{true: workloadLost, false: workloadControlBad}[passed])
			}
		})
	}
	for _, w := range all {
		if cells[w.id+"/s3cond"] == "" || cells[w.id+"/direct"] == "" {
			t.Log("only part of the workloads ran; docs/workloads.md not compared")
			return
		}
	}
	checkGeneratedDoc(t, "workloads.md", renderWorkloads(all, cells), "TestWorkloads")
}

// runSubtest runs f as subtest name and reports whether it passed and
// whether it was skipped (t.Run alone counts a skipped subtest as passed).
func runSubtest(t *testing.T, name string, f func(*testing.T)) (passed, skipped bool) {
	passed = t.Run(name, func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		f(t)
	})
	return passed, skipped
}

func renderWorkloads(all []workload, cells map[string]string) string {
	var b strings.Builder
	b.WriteString("# Workloads on a store without conditional writes\n\n")
	b.WriteString("<!-- Generated by TestWorkloads (e2e/workloads_test.go); do not edit by hand.\n")
	b.WriteString("     Regenerate: S3COND_WRITE_COMPAT=1 go test -count=1 -run TestWorkloads ./e2e -->\n\n")
	b.WriteString("Real tools that rely on S3's conditional writes, run in s3cond's end-to-end tests\n")
	b.WriteString("against [s3rver](https://github.com/jamhall/s3rver) 3.7.1, a store that ignores\n")
	b.WriteString("`If-None-Match` and `If-Match` (a second create overwrites, a stale ETag succeeds).\n")
	b.WriteString("Each runs twice: through s3cond in front of s3rver, where it must keep every write,\n")
	b.WriteString("and straight against s3rver, the control, where the same run must lose writes, so\n")
	b.WriteString("the test is known to measure something. A `FAIL` in either column fails the test.\n")
	b.WriteString("See also the [client compatibility matrix](compatibility.md) and the recipes in\n")
	b.WriteString("[recipes/](recipes/).\n\n")
	b.WriteString("| workload | through s3cond | straight on s3rver (control) |\n|---|---|---|\n")
	for _, w := range all {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", w.title, cells[w.id+"/s3cond"], cells[w.id+"/direct"])
	}
	b.WriteString("\n## What each run checks\n\n")
	for _, w := range all {
		fmt.Fprintf(&b, "### %s\n\n- Through s3cond: %s.\n- Control: %s.\n- %s\n\n", w.title, w.checks, w.control, w.note)
	}
	b.WriteString(s3rverSuites)
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// s3rverSuites is the part of docs/workloads.md about the other suites
// that run on s3rver, and what s3rver's gaps keep out of them.
const s3rverSuites = `## The other suites on s3rver

Besides these workloads, s3rver is the second backend of:

- the conditional-write suites (TestConditionalRows, TestConditionalSDK,
  TestConditionalAWSCLI: subtest ` + "`s3rver`" + `), one s3cond with its embedded
  lease store: every 412 and 404 there comes from s3cond alone;
- the races (TestRaceCreate, TestRaceCASCounter, TestRaceDeleteVersusPut:
  subtest ` + "`s3rver`" + `), three s3cond processes sharing a lease table, with
  controls straight on s3rver (TestS3rverControlCreateRace: 32 creates, all
  succeed; TestS3rverControlCASCounter: increments lost);
- the linearizability checks (e2e/linearizability: TestS3rverOneProxyEmbedded,
  TestS3rverThreeProxiesSharedDynamoDB on moto), and the same workload
  straight on s3rver, which porcupine must reject
  (TestS3rverControlNotLinearizable).

What s3rver lacks limits what runs there:

- no ListMultipartUploads (501): "no upload is left open" cannot be
  checked, so the killed-holder and aborted-upload tests stay on versitygw;
- no AbortMultipartUpload (405): a failed conditional
  CompleteMultipartUpload's parts stay in the store (the lib-storage
  losers' parts above);
- it overwrites files in place: a GET racing an overwrite of the same key
  can return a short body, a 500, or stray bytes that break the next
  answer on that connection. The races and histories count such a read as
  a failed (ambiguous) read and expect a compare-and-swap's ETag from the
  MD5 of the body read, never the GET's ETag header; a write that then
  fails with a 5xx counts as ambiguous;
- it does not verify SigV4 signatures (only that the key id exists), and
  resolves ` + "`a//b`" + ` as a file path: s3cond's default ` + "`key_policy: strict`" + `
  refuses such keys before they reach it.
`

// checkGeneratedDoc compares docs/<name> with run, or writes run there
// when S3COND_WRITE_COMPAT=1.
func checkGeneratedDoc(t *testing.T, name, run, testName string) {
	t.Helper()
	path := filepath.Join(testservers.RepoRoot(t), "docs", name)
	committed, readErr := os.ReadFile(path)
	if os.Getenv(compatWriteEnv) == "1" {
		if err := os.WriteFile(path, []byte(run), 0o644); err != nil {
			t.Fatalf("write %s: %v", path, err)
		}
		if readErr != nil || string(committed) != run {
			t.Logf("%s rewritten with this run's results", path)
		}
		return
	}
	if readErr != nil {
		t.Fatalf("read %s: %v (generate it with %s=1)", path, readErr, compatWriteEnv)
	}
	if line, ok := firstDifference(string(committed), run); ok {
		t.Errorf("%s does not match this run (first difference at %s); regenerate it with %s=1 go test -count=1 -run %s ./e2e and review the change",
			path, line, compatWriteEnv, testName)
	}
}

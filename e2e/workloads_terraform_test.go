package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/s3cond/s3cond/internal/testservers"
)

// terraformReport is e2e/terraformlock's report (its report type).
type terraformReport struct {
	Name                                  string
	Attempts, Rounds                      int
	Serials                               []int
	LockHeld, LockHeldWithInfo            int
	LockHeldMessage                       string
	OtherLockErrors, OwnStaleLocks        int
	TwoHolders, StateErrors, UnlockErrors int
	StaleDigests                          int
	Samples                               []string
	Elapsed                               string
}

// terraformTotals adds up the processes' reports.
type terraformTotals struct {
	rounds, attempts, lockHeld, lockHeldWithInfo, other, ownStale, twoHolders, stateErrors, unlockErrors int
	staleDigests                                                                                         int
	duplicateSerials                                                                                     []int
	lockHeldMessage                                                                                      string
}

func sumTerraformReports(reports []terraformReport) terraformTotals {
	var tot terraformTotals
	seen := map[int]bool{}
	for _, r := range reports {
		tot.rounds += r.Rounds
		tot.attempts += r.Attempts
		tot.lockHeld += r.LockHeld
		tot.lockHeldWithInfo += r.LockHeldWithInfo
		tot.other += r.OtherLockErrors
		tot.ownStale += r.OwnStaleLocks
		tot.twoHolders += r.TwoHolders
		tot.stateErrors += r.StateErrors
		tot.unlockErrors += r.UnlockErrors
		tot.staleDigests += r.StaleDigests
		if tot.lockHeldMessage == "" {
			tot.lockHeldMessage = r.LockHeldMessage
		}
		for _, s := range r.Serials {
			if seen[s] {
				tot.duplicateSerials = append(tot.duplicateSerials, s)
			}
			seen[s] = true
		}
	}
	slices.Sort(tot.duplicateSerials)
	return tot
}

func (tot terraformTotals) String() string {
	return fmt.Sprintf("%d state writes in %d lock attempts; %d refused as held (%d with the holder's info), %d other lock errors, "+
		"%d own stale locks removed, %d rounds with two holders, %d duplicate serials, %d state errors, %d stale digests, %d unlock errors",
		tot.rounds, tot.attempts, tot.lockHeld, tot.lockHeldWithInfo, tot.other, tot.ownStale, tot.twoHolders,
		len(tot.duplicateSerials), tot.stateErrors, tot.staleDigests, tot.unlockErrors)
}

var terraformLockBuild struct {
	once sync.Once
	path string
	err  error
}

// terraformLockBinary builds e2e/terraformlock once per test binary.
func terraformLockBinary(t *testing.T) string {
	t.Helper()
	terraformLockBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "s3cond-terraformlock-")
		if err != nil {
			terraformLockBuild.err = err
			return
		}
		terraformLockBuild.path = filepath.Join(dir, "terraformlock")
		cmd := exec.Command("go", "build", "-o", terraformLockBuild.path, "./e2e/terraformlock")
		cmd.Dir = testservers.RepoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			terraformLockBuild.err = fmt.Errorf("go build ./e2e/terraformlock: %w\n%s", err, out)
		}
	})
	if terraformLockBuild.err != nil {
		t.Fatal(terraformLockBuild.err)
	}
	return terraformLockBuild.path
}

// terraformChildEnv is the environment of a replay process: the test's
// without any AWS_* variable (this machine sets AWS_CA_BUNDLE), plus the
// key to sign with and no shared config files.
func terraformChildEnv(cred Credentials) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	return append(env, "AWS_ACCESS_KEY_ID="+cred.AccessKey, "AWS_SECRET_ACCESS_KEY="+cred.Secret, "AWS_REGION="+Region,
		"AWS_CONFIG_FILE="+os.DevNull, "AWS_SHARED_CREDENTIALS_FILE="+os.DevNull, "AWS_EC2_METADATA_DISABLED=true")
}

// runTerraformReplays runs one replay process per endpoint at once, each
// making rounds state writes under the lock of bucket/env/terraform.tfstate.
func runTerraformReplays(t *testing.T, endpoints []string, cred Credentials, caFile, bucket string, rounds int, deadline time.Duration) []terraformReport {
	t.Helper()
	var procs []terraformProcess
	for _, endpoint := range endpoints {
		procs = append(procs, terraformProcess{endpoint: endpoint, rounds: rounds, deadline: deadline,
			args: []string{"-ca", caFile}})
	}
	return runTerraformProcesses(t, procs, cred, bucket, terraformStateKey)
}

const terraformStateKey = "env/terraform.tfstate"

// terraformProcess is one replay process: its endpoint, rounds, deadline
// and more flags.
type terraformProcess struct {
	endpoint string
	rounds   int
	deadline time.Duration
	args     []string
}

// runTerraformProcesses runs the processes at once, contending for the
// lock of bucket/key, process i named tf<i>.
func runTerraformProcesses(t *testing.T, procs []terraformProcess, cred Credentials, bucket, key string) []terraformReport {
	t.Helper()
	bin := terraformLockBinary(t)
	oracle := t.TempDir()
	reports := make([]terraformReport, len(procs))
	var wg sync.WaitGroup
	for i, p := range procs {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(t.Context(), p.deadline+10*time.Second)
			defer cancel()
			args := append([]string{"-endpoint", p.endpoint, "-bucket", bucket, "-key", key, "-oracle", oracle,
				"-name", fmt.Sprintf("tf%d", i), "-rounds", fmt.Sprint(p.rounds), "-deadline", p.deadline.String()}, p.args...)
			cmd := exec.CommandContext(ctx, bin, args...)
			cmd.Env = terraformChildEnv(cred)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Errorf("replay %d: %v\n%s", i, err, stderr.String())
				return
			}
			if err := json.Unmarshal(stdout.Bytes(), &reports[i]); err != nil {
				t.Errorf("replay %d report: %v\n%s", i, err, stdout.String())
			}
		})
	}
	wg.Wait()
	for _, r := range reports {
		t.Logf("%s: %d rounds, %d attempts in %s; samples %q", r.Name, r.Rounds, r.Attempts, r.Elapsed, r.Samples)
	}
	return reports
}

// terraformStateSerial reads the state's serial from the store itself; ok
// is false for a state that is no JSON document (two writers interleaved
// their bytes in it).
func terraformStateSerial(t *testing.T, store Store, bucket, key string) (serial int, ok bool) {
	t.Helper()
	body := getBytes(t, t.Context(), NewS3Client(store.Endpoint, store.Cred, nil), bucket, key)
	var st struct{ Serial int }
	if err := json.Unmarshal(body, &st); err != nil {
		t.Logf("state %q: %v", body, err)
		return 0, false
	}
	return st.Serial, true
}

const terraformRounds = 40 // state writes per process through s3cond

// terraformThroughS3cond: three replay processes, over HTTPS (so the SDK
// sends its SHA-256 as an aws-chunked trailer, as against real S3), through
// two s3cond processes sharing a lease table, in front of s3rver. Never two
// holders, every state write kept, and the losers see "lock held".
func terraformThroughS3cond(t *testing.T) {
	e := NewEnv(t, WithBackend(BackendS3rver), WithDynamoDBLeases(testservers.StartDynalite(t)), WithProxies(2))
	CreateBucket(t, e.Client(t, e.RW), "tfstate")
	var fronts []*TLSFront
	var endpoints []string
	for i := range 3 {
		if i < len(e.Proxies) {
			fronts = append(fronts, NewTLSFront(t, e.Proxies[i].Endpoint))
		}
		endpoints = append(endpoints, fronts[i%len(fronts)].URL)
	}
	caFile := filepath.Join(t.TempDir(), "front-ca.pem")
	var pems []byte
	for _, f := range fronts {
		pems = append(pems, f.CertPEM...)
	}
	writeFile(t, caFile, string(pems))

	tot := sumTerraformReports(runTerraformReplays(t, endpoints, e.RW, caFile, "tfstate", terraformRounds, 80*time.Second))
	serial, ok := terraformStateSerial(t, e.Store, "tfstate", terraformStateKey)
	if !ok {
		t.Fatalf("the state through s3cond is no JSON document: two writers interleaved")
	}
	t.Logf("through s3cond: %s; final serial %d", tot, serial)
	for i, f := range fronts {
		if modes := f.Modes(); modes["STREAMING-UNSIGNED-PAYLOAD-TRAILER"] == 0 {
			t.Errorf("front %d saw no aws-chunked trailer upload (modes %v): the SDK did not send its checksum as over HTTPS", i, modes)
		}
	}
	if tot.twoHolders != 0 {
		t.Errorf("%d rounds had two lock holders at once", tot.twoHolders)
	}
	if tot.rounds != 3*terraformRounds || serial != tot.rounds || len(tot.duplicateSerials) != 0 {
		t.Errorf("state serial %d after %d state writes (want %d; duplicate serials %v): state writes lost",
			serial, tot.rounds, 3*terraformRounds, tot.duplicateSerials)
	}
	if tot.lockHeld == 0 || tot.lockHeldWithInfo == 0 {
		t.Errorf("no lock attempt was refused with the holder's info: the processes did not contend")
	}
	if m := tot.lockHeldMessage; !strings.Contains(m, "StatusCode: 412") || !strings.Contains(m, "PreconditionFailed") || !strings.Contains(m, "Lock Info:") {
		t.Errorf("a refused lock reads %q; want a 412 PreconditionFailed with the holder's Lock Info", m)
	}
	t.Logf("a refused lock, as Terraform prints it:\n%s", tot.lockHeldMessage)
}

// terraformStraightOnS3rver is the control: the same replay straight on
// s3rver, which ignores If-None-Match, must show two holders at once or
// lost state writes.
func terraformStraightOnS3rver(t *testing.T) {
	store := testservers.StartS3rver(t, "tfstate")
	cred := Credentials{store.AccessKey, store.Secret}
	endpoints := []string{store.Endpoint, store.Endpoint, store.Endpoint}
	// A process may never get the lock back once s3rver has mixed two
	// writers' lock files: a short deadline ends the control all the same.
	tot := sumTerraformReports(runTerraformReplays(t, endpoints, cred, "", "tfstate", 15, 20*time.Second))
	serial, ok := terraformStateSerial(t, Store{Kind: BackendS3rver, Endpoint: store.Endpoint, Cred: cred}, "tfstate", terraformStateKey)
	t.Logf("straight on s3rver: %s; final serial %d (a JSON document: %v)", tot, serial, ok)
	if tot.twoHolders == 0 && ok && serial == tot.rounds && len(tot.duplicateSerials) == 0 {
		t.Fatalf("no two holders and no lost state write straight on s3rver: the control measured nothing")
	}
}

package linearizability

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A lost embedded lease file: the holder of a sized lease (its copy held
// on the way to the store) is SIGKILLed and its lease file becomes
// untrustworthy before s3cond restarts on its data_dir: the machine
// restarted with commits unsynced, or the file was deleted. The restarted
// s3cond discards the file and refuses lease writes for the longest lease
// it may have held, max(timeout, max_sized_timeout, the recorded longest)
// × skew (issue 33 item 3, review finding F8). A pause of only timeout ×
// skew lets the contender's create be acknowledged, and then the copy
// lands over it: not linearizable.
type leaseFileLoss struct {
	name string
	// lose makes the killed holder's lease file untrustworthy, with the
	// config file of its next start at configPath.
	lose func(t *testing.T, dataDir, configPath string)
	// killedDuringThePause: the restarted s3cond is SIGKILLed during its
	// pause and started again, on its new file, which it trusts.
	killedDuringThePause bool
}

var (
	machineRestart = leaseFileLoss{name: "machine-restart", lose: func(t *testing.T, dataDir, _ string) { sayAnotherBoot(t, dataDir) }}
	deletedFile    = leaseFileLoss{name: "deleted-file", lose: func(t *testing.T, dataDir, _ string) {
		if err := os.Remove(filepath.Join(dataDir, "leases.db")); err != nil {
			t.Fatal(err)
		}
	}}
	// replacedFile: the lease file moved over by a copy of itself (a
	// backup restored): another inode than the state file records.
	replacedFile = leaseFileLoss{name: "replaced-file", lose: func(t *testing.T, dataDir, _ string) {
		file := filepath.Join(dataDir, "leases.db")
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file+".restored", raw, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(file+".restored", file); err != nil {
			t.Fatal(err)
		}
	}}
	// killedMidPause: the pause is itself a wait for rows nobody can read,
	// and must survive a second crash.
	killedMidPause = leaseFileLoss{name: "killed-during-the-pause", lose: machineRestart.lose, killedDuringThePause: true}
	// loweredCap also restarts s3cond with lease.max_sized_timeout at the
	// plain timeout: only the state file's record of the longest lease
	// (review finding F8) still makes the pause cover the copy's.
	loweredCap = leaseFileLoss{name: "machine-restart-lowered-cap", lose: func(t *testing.T, dataDir, configPath string) {
		sayAnotherBoot(t, dataDir)
		editYAML(t, configPath, func(doc map[string]any) {
			doc["lease"].(map[string]any)["max_sized_timeout"] = LeaseTimeout.String()
		})
	}}
)

// sayAnotherBoot rewrites the state file beside the lease file to say the
// process that used it ran on an earlier boot of the machine, every other
// field kept (the recorded longest lease among them).
func sayAnotherBoot(t *testing.T, dataDir string) {
	t.Helper()
	path := filepath.Join(dataDir, "leases.db.state")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var state map[string]any
	if err := json.Unmarshal(raw, &state); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if state["synced"] != false {
		t.Fatalf("state file of the killed process: %s; want it open, unsynced", raw)
	}
	state["boot_id"] = "a-boot-before-this-one"
	if raw, err = json.Marshal(state); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

// recordLostLeaseFile plays the scenario on one s3cond with its embedded
// store and returns the history and the contender's last outcome.
func recordLostLeaseFile(t *testing.T, loss leaseFileLoss, buildTags string) (*Recorder, Outcome) {
	t.Helper()
	c := NewCluster(t, ClusterOptions{DelayBackend: true, BuildTags: buildTags, EditConfig: sizedLeases})
	rec := NewRecorder()
	held := startHeldCopy(t, c, rec, 0, "k")
	c.Proxies[0].Process.Kill()
	if resp := <-held.answer; resp != nil {
		t.Fatalf("the killed holder answered %d", resp.Status)
	}
	loss.lose(t, c.DataDirs[0], c.Proxies[0].ConfigPath)
	c.Proxies[0].Restart(t)
	lost := time.Now()
	if loss.killedDuringThePause {
		c.Proxies[0].Process.Kill()
		c.Proxies[0].Restart(t)
	}

	acked := make(chan struct{})
	released := make(chan struct{})
	go func() {
		defer close(released)
		releaseWhenDue(t, c, held, "k", lost, acked)
	}()
	outcome := contend(t, c, rec, 0, "k", acked)
	<-released
	value := recordFinalValue(t, c, rec, "k")
	t.Logf("the contender's create: %s %s after the restart; k holds %q; history %s", outcome, time.Since(lost).Round(time.Millisecond), value, rec.Stats())
	return rec, outcome
}

// TestLinearizableAcrossALostLeaseFileWithASizedLease: the pause after a
// discarded lease file covers the sized lease the file held, also when the
// restart lowered the cap: the contender's create is refused (503) until
// the copy landed, then 412.
func TestLinearizableAcrossALostLeaseFileWithASizedLease(t *testing.T) {
	t.Parallel()
	for _, loss := range []leaseFileLoss{machineRestart, deletedFile, replacedFile, killedMidPause, loweredCap} {
		t.Run(loss.name, func(t *testing.T) {
			t.Parallel()
			rec, outcome := recordLostLeaseFile(t, loss, "")
			if outcome != OutcomePreconditionFailed {
				t.Errorf("the contender's create: %s; want 412, the copy having landed during the pause", outcome)
			}
			RequireLinearizable(t, rec)
		})
	}
}

// TestNegativeControlPlainLeaseWaitAfterALostLeaseFile: with the pause of
// timeout × skew only (the protocol before issue 33), the contender's
// create is acknowledged and the copy lands over it. The checker must find
// the history not linearizable: without that, the test above says nothing.
func TestNegativeControlPlainLeaseWaitAfterALostLeaseFile(t *testing.T) {
	t.Parallel()
	rec, outcome := recordLostLeaseFile(t, machineRestart, unsafePlainLeaseWait)
	if outcome != OutcomeOK {
		t.Fatalf("the contender's create: %s; want it acknowledged after the plain wait", outcome)
	}
	requireIllegal(t, rec, "a pause of timeout × skew after a lost lease file")
}

package boltstore

import (
	"path/filepath"
	"testing"
	"time"
)

// A process that discarded its lease file is killed during its pause and
// started again on the same boot: the new file is its own and trusted, but
// the lost file's leases may still live, so the pause must go on until its
// recorded end. Before the pause was recorded, the second start granted
// leases at once.
func TestPauseSurvivesAProcessKilledDuringIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	lease := sizedLeaseOptions(600 * time.Millisecond)
	crash(t, openOnBoot(t, path, "boot-1", lease))
	paused := openOnBoot(t, path, "boot-2", lease)
	_, writableAt, discarded := paused.Discarded()
	if !discarded {
		t.Fatal("a file left open on another boot was trusted")
	}
	crash(t, paused)

	again := openOnBoot(t, path, "boot-2", lease)
	why, resumedUntil, pausing := again.Discarded()
	if !pausing {
		t.Fatal("restarted during the pause on the same boot, the process grants leases at once")
	}
	if early := writableAt.Sub(resumedUntil); early > 50*time.Millisecond {
		t.Fatalf("the resumed pause ends %s before the first one (%s)", early, why)
	}
	if err := createRow(t, again, "b/other"); err == nil {
		t.Fatal("a lease write during the resumed pause was accepted")
	}
}

// The pause recorded by a process that stopped cleanly during it goes on
// too, and a start on another boot, which cannot tell how long has
// passed, pauses a full wait again.
func TestPauseSurvivesACleanStopAndAMachineRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	lease := sizedLeaseOptions(600 * time.Millisecond)
	crash(t, openOnBoot(t, path, "boot-1", lease))
	paused := openOnBoot(t, path, "boot-2", lease)
	if err := paused.Close(); err != nil {
		t.Fatal(err)
	}
	opened := time.Now()
	again := openOnBoot(t, path, "boot-3", lease)
	_, writableAt, pausing := again.Discarded()
	full := lease.LongestTakeoverWait()
	if !pausing || writableAt.Sub(opened) < full-50*time.Millisecond {
		t.Fatalf("started on another boot after a clean stop during the pause: pausing %v until %s from now; want a full %s",
			pausing, writableAt.Sub(opened), full)
	}
}

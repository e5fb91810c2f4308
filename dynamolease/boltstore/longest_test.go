package boltstore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
)

// sizedLeaseOptions are lease settings whose sized leases are capped at
// sizedCap.
func sizedLeaseOptions(sizedCap time.Duration) dynamolease.Options {
	return dynamolease.Options{Timeout: 100 * time.Millisecond, SizedLeaseCap: sizedCap, MaxClockSkewRate: 2,
		PollInterval: 10 * time.Millisecond, WaitBudget: 50 * time.Millisecond}
}

// grantSizedLease takes a lease on b/copied from tbl and lengthens it to
// the cap, as a CopyObject's is; it returns the lease and when it was
// lengthened.
func grantSizedLease(t *testing.T, tbl *Table, lease dynamolease.Options) (*dynamolease.Lease, time.Time) {
	t.Helper()
	holder := dynamolease.NewCommitter(tbl, lease, zerolog.Nop())
	copying, err := holder.Acquire(context.Background(), "b/copied", "*", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := copying.Extend(context.Background(), time.Hour); err != nil {
		t.Fatal(err)
	}
	if copying.Timeout() != lease.SizedLeaseCap {
		t.Fatalf("sized lease of %s, want the cap %s", copying.Timeout(), lease.SizedLeaseCap)
	}
	return copying, time.Now()
}

// requirePauseCovers fails unless tbl, opened after the machine restarted,
// discarded its file and pauses lease writes until a lease of length
// granted at grantedAt has ended (× skew).
func requirePauseCovers(t *testing.T, tbl *Table, granted time.Duration, grantedAt time.Time, skew float64) {
	t.Helper()
	_, writableAt, discarded := tbl.Discarded()
	if !discarded {
		t.Fatal("a file left open on another boot was trusted")
	}
	liveUntil := grantedAt.Add(time.Duration(float64(granted) * skew))
	if writableAt.Before(liveUntil) {
		t.Fatalf("lease writes resume %s before the lost %s lease (× skew %g) could have ended: the pause counts the lowered cap only",
			liveUntil.Sub(writableAt).Round(time.Millisecond), granted, skew)
	}
}

// Review finding F8: lease.max_sized_timeout is configuration. A sized
// lease granted under a 600 ms cap, the process killed, the machine
// restarted and s3cond started with a 150 ms cap: the discarded file's
// pause must still cover the 600 ms lease (× skew), not 150 ms × skew. It
// does because the state file recorded the cap the lease was granted under.
func TestLoweredCapStillCoversALeaseGrantedUnderTheOldOne(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	high, low := sizedLeaseOptions(600*time.Millisecond), sizedLeaseOptions(150*time.Millisecond)
	first := openOnBoot(t, path, "boot-1", high)
	_, grantedAt := grantSizedLease(t, first, high)
	crash(t, first)

	again := openOnBoot(t, path, "boot-2", low)
	requirePauseCovers(t, again, high.SizedLeaseCap, grantedAt, high.MaxClockSkewRate)
}

// The same, with a run between the grant and the machine restart that
// trusted the file under the lowered cap: its record must still cover the
// long lease, which is one of the file's rows.
func TestLoweredCapRunKeepsTheRecordOfALongerLeaseInTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	high, low := sizedLeaseOptions(600*time.Millisecond), sizedLeaseOptions(150*time.Millisecond)
	first := openOnBoot(t, path, "boot-1", high)
	_, grantedAt := grantSizedLease(t, first, high)
	crash(t, first)

	between := openOnBoot(t, path, "boot-1", low)
	if _, _, discarded := between.Discarded(); discarded {
		t.Fatal("a file left open on this boot was discarded")
	}
	crash(t, between)

	again := openOnBoot(t, path, "boot-2", low)
	requirePauseCovers(t, again, high.SizedLeaseCap, grantedAt, high.MaxClockSkewRate)
}

// A lowered cap does take effect once no row of the file carries a longer
// lease: a new file under a 150 ms cap pauses 150 ms × skew after a
// machine restart, not the longest cap ever configured.
func TestRecordFollowsTheCapOfAFileWithoutLongerLeases(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	low := sizedLeaseOptions(150 * time.Millisecond)
	first := openOnBoot(t, path, "boot-1", low)
	crash(t, first)
	opened := time.Now()
	again := openOnBoot(t, path, "boot-2", low)
	_, writableAt, discarded := again.Discarded()
	if !discarded {
		t.Fatal("a file left open on another boot was trusted")
	}
	if wait := writableAt.Sub(opened); wait > time.Second {
		t.Fatalf("paused %s after a run that granted at most 150 ms leases", wait)
	}
}

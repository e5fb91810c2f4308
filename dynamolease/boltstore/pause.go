package boltstore

import (
	"time"

	"github.com/s3cond/s3cond/dynamolease"
)

// The pause after discarding the lease file is itself a wait for rows
// nobody can read, so it must survive the process: one killed during its
// pause would otherwise start again on the new file, which it trusts (same
// boot, its own), and grant leases at once while a lost row's lease may
// still live. So the state file records when the pause ends, on the
// machine's boot clock (CLOCK_BOOTTIME: it runs on across processes,
// suspend included, and no one sets it), and a start on the same boot
// resumes the pause until then. A start on another boot cannot tell how
// long has passed: it pauses a full wait again.

// resumedPause is why the file is treated as discarded when a pause is
// resumed, for the log.
const resumedPause = "a process that discarded the lease file stopped before its pause ended; the pause goes on"

// resumePause continues the pause an earlier process recorded in st (read
// from the state file of a file trusted otherwise): until the recorded end
// on this boot, or a full wait on another.
func (b *Table) resumePause(st leaseFileState, bootID string, lease dynamolease.Options) {
	if st.PausedUntilBootNS == 0 {
		return
	}
	wait := lease.LongestTakeoverWaitBeyond(recordedLongestLease(st))
	if st.BootID == bootID {
		now, ok := bootClock()
		if !ok {
			return
		}
		wait = min(wait, time.Duration(st.PausedUntilBootNS-now))
		if wait <= 0 {
			return
		}
	}
	b.startPause(resumedPause, wait)
}

// startPause refuses lease writes for wait, recorded in the state file
// from now on (stateWithRecord).
func (b *Table) startPause(why string, wait time.Duration) {
	b.writableAt = time.Now().Add(wait)
	b.discarded = why
	if now, ok := bootClock(); ok {
		b.pausedUntilBoot = now + int64(wait)
	}
}

// pauseEndToRecord is the pause's end on the boot clock while it lasts, 0
// once it has passed (or when there was none).
func (b *Table) pauseEndToRecord() int64 {
	if b.pausedUntilBoot == 0 {
		return 0
	}
	if now, ok := bootClock(); ok && now >= b.pausedUntilBoot {
		return 0
	}
	return b.pausedUntilBoot
}

package boltstore

import "golang.org/x/sys/unix"

// bootClock is CLOCK_BOOTTIME in nanoseconds: time since this boot of the
// machine, the same in every process.
func bootClock() (int64, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return 0, false
	}
	return ts.Nano(), true
}

//go:build !linux

package boltstore

// bootClock: without Linux there is no boot id, hence no state file and no
// pause to record (durability.go).
func bootClock() (int64, bool) { return 0, false }

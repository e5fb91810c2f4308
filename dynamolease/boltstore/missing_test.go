package boltstore

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/s3cond/s3cond/dynamolease"
)

// A lease file deleted after its process stopped (crashed, or closed it)
// takes its leases with it: the next process on the same boot must not
// start afresh as if none had been held, but refuse lease writes for
// timeout × skew, as after a machine restart.
func TestMissingLeaseFileIsWaitedOut(t *testing.T) {
	for name, stop := range map[string]func(t *testing.T, tbl *Table){
		"after a crash": crash,
		"after a clean close": func(t *testing.T, tbl *Table) {
			if err := tbl.Close(); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "leases.db")
			stop(t, openWithHeldRow(t, path, "boot-1"))
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			lease := dynamolease.Options{Timeout: time.Hour, MaxClockSkewRate: 2}
			again := openOnBoot(t, path, "boot-1", lease)
			if why, _, discarded := again.Discarded(); !discarded {
				t.Fatal("a new lease file was trusted in place of the deleted one")
			} else {
				t.Logf("discarded: %s", why)
			}
			if err := createRow(t, again, "b/held"); !errors.Is(err, ErrLeaseFileRecovering) {
				t.Fatalf("create on the new file = %v, want ErrLeaseFileRecovering", err)
			}
		})
	}
}

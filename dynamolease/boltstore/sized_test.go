package boltstore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
)

// A sized lease (a CopyObject's, lengthened to its work: proxy/leasesize.go)
// held when the machine restarted is lost with the discarded lease file; the
// store may still be copying. The pause before lease writes resume must
// cover that lease, not only lease.timeout: with the old pause (timeout ×
// skew, 200 ms here) a create 200 ms after the restart would land while the
// 600 ms lease was live (issue 33 finding 3: a create acknowledged at 2.1 s
// then overwritten by a dead holder's copy).
func TestDiscardedLeaseFileWaitsOutTheLongestSizedLease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	lease := dynamolease.Options{Timeout: 100 * time.Millisecond, SizedLeaseCap: 600 * time.Millisecond, MaxClockSkewRate: 2,
		PollInterval: 10 * time.Millisecond, WaitBudget: 50 * time.Millisecond}
	first := openOnBoot(t, path, "boot-1", lease)
	holder := dynamolease.NewCommitter(first, lease, zerolog.Nop())
	copying, err := holder.Acquire(context.Background(), "b/copied", "*", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := copying.Extend(context.Background(), time.Hour); err != nil {
		t.Fatal(err)
	}
	extendedBy := time.Now()
	if copying.Timeout() != lease.SizedLeaseCap {
		t.Fatalf("sized lease of %s, want the cap %s", copying.Timeout(), lease.SizedLeaseCap)
	}
	crash(t, first)

	again := openOnBoot(t, path, "boot-2", lease)
	_, writableAt, discarded := again.Discarded()
	if !discarded {
		t.Fatal("a file left open on another boot was trusted")
	}
	liveUntil := extendedBy.Add(time.Duration(float64(copying.Timeout()) * lease.MaxClockSkewRate))
	if writableAt.Before(liveUntil) {
		t.Fatalf("lease writes resume %s before the lost sized lease (%s × skew %g) could have ended",
			liveUntil.Sub(writableAt).Round(time.Millisecond), copying.Timeout(), lease.MaxClockSkewRate)
	}
}

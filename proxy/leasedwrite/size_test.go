package leasedwrite

import (
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
)

func TestLeaseLengthIsTimeoutPlusWorkAtTheMinimumThroughput(t *testing.T) {
	p := &Writer{leaseTimeout: 20 * time.Second, minStoreThroughput: DefaultMinStoreThroughput}
	for _, tc := range []struct {
		work int64
		want time.Duration
	}{
		{0, 20 * time.Second},
		{-1, 20 * time.Second},
		// Work within a quarter of the lease keeps the plain lease: it is
		// sent with half the lease left (SPEC §3 step 5).
		{1, 20 * time.Second},
		{16 << 20, 20 * time.Second},
		{5 * 16 << 20, 20 * time.Second},
		{5*16<<20 + 16, 25*time.Second + 954}, // 953.7 ns, rounded up
		{5 << 30, 20*time.Second + 320*time.Second},
		{1 << 40, 20*time.Second + 65536*time.Second},
		{5 << 40, maxLeaseLength},
		{1<<63 - 1, maxLeaseLength},
	} {
		if got := p.leaseLengthFor(tc.work); got != tc.want {
			t.Errorf("lease for %d bytes: %s, want %s", tc.work, got, tc.want)
		}
	}
}

// A sized lease never exceeds lease.max_sized_timeout: the waits that stand
// for unreadable rows (a discarded lease file, a lost table) cover it and
// nothing longer.
func TestSizedLeaseNeverExceedsTheCap(t *testing.T) {
	leases := dynamolease.NewCommitter(dynamolease.NewMemTable(), dynamolease.Options{Timeout: 20 * time.Second, SizedLeaseCap: 5 * time.Minute}, zerolog.Nop())
	p := &Writer{leaseTimeout: 20 * time.Second, minStoreThroughput: DefaultMinStoreThroughput, leases: leases}
	for work, want := range map[int64]time.Duration{
		1 << 30: 20*time.Second + 64*time.Second,
		5 << 30: 5 * time.Minute, // 340 s uncapped
		1 << 40: 5 * time.Minute,
	} {
		if got := p.leaseLengthFor(work); got != want {
			t.Errorf("lease for %d bytes: %s, want %s", work, got, want)
		}
	}
}

package bench

import (
	"os"
	"testing"
)

func TestPeakRSSOfThisProcess(t *testing.T) {
	pid := os.Getpid()
	// Touch 64 MiB so the peak is well above a bare test binary's.
	ballast := make([]byte, 64<<20)
	for i := range ballast {
		ballast[i] = 1
	}
	// Current first: the peak read afterwards can only be higher.
	current, err := CurrentRSS(pid)
	if err != nil {
		t.Fatal(err)
	}
	peak, err := PeakRSS(pid)
	if err != nil {
		t.Fatal(err)
	}
	if peak < 64<<20 {
		t.Errorf("peak RSS %d after touching 64 MiB", peak)
	}
	if current > peak {
		t.Errorf("current RSS %d above peak %d", current, peak)
	}
	if ballast[len(ballast)-1] != 1 {
		t.Fatal("ballast lost")
	}
	if err := ResetPeakRSS(pid); err != nil {
		t.Fatalf("reset own peak RSS: %v", err)
	}
	if _, err := PeakRSS(1 << 30); err == nil {
		t.Error("a process that does not exist: want an error")
	}
}

package bench

import (
	"crypto/sha256"
	"os"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	// A command name with a space and a ')' of its own; utime 250 and
	// stime 50 ticks.
	line := "4242 (s3 cond) x) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 50 0 0 20 0 9 0 100 1000000 500 18446744073709551615"
	got, err := parseStatCPU(line)
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 * time.Second; got != want {
		t.Fatalf("CPU time %v, want %v", got, want)
	}
	for _, bad := range []string{"", "4242 no parentheses 1 2 3", "4242 (short) S 1 2", "4242 (x) S 1 2 3 4 5 6 7 8 9 10 ten 50"} {
		if _, err := parseStatCPU(bad); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

func TestProcessCPUTimeOfThisProcessGrowsWithWork(t *testing.T) {
	pid := os.Getpid()
	before, err := ProcessCPUTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	// Hash until the reading has moved by ten ticks; a reading that never
	// moves fails at the deadline.
	sum := sha256.Sum256(nil)
	deadline := time.Now().Add(10 * time.Second)
	for {
		for range 10000 {
			sum = sha256.Sum256(sum[:])
		}
		after, err := ProcessCPUTime(pid)
		if err != nil {
			t.Fatal(err)
		}
		if after-before >= 100*time.Millisecond {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("CPU time grew by %v over 10 s of hashing", after-before)
		}
	}
	if _, err := ProcessCPUTime(1 << 30); err == nil {
		t.Error("a process that does not exist: want an error")
	}
}

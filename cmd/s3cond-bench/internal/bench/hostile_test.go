package bench

import (
	"context"
	"testing"
)

// The hostile crowd is for loopback only: it must never reach another host.
func TestRunHostileRefusesNonLoopbackAddresses(t *testing.T) {
	for _, address := range []string{"10.0.0.1:9000", "example.com:80", "0.0.0.0:9000", "9000"} {
		if _, err := RunHostile(context.Background(), Hostile{Address: address, Conns: 1, PID: 1}); err == nil {
			t.Errorf("RunHostile(%q) ran", address)
		}
	}
}

package app

import (
	"sync/atomic"

	"github.com/s3cond/s3cond/proxy/leasedwrite"
)

// modeSwitch is how one backend's conditional writes are served now
// (proxy.Backend.Mode reads it once per request): the mode chosen at
// start-up until a background re-probe finds the store worse and switches
// it (reprobe.go). It switches once and never back: a store found wanting
// is served so until a restart probes it again, and writes already routed
// finish in the mode they began in.
type modeSwitch struct {
	current  atomic.Pointer[leasedwrite.Mode]
	switched atomic.Bool
}

func newModeSwitch(start leasedwrite.Mode) *modeSwitch {
	s := &modeSwitch{}
	s.current.Store(&start)
	return s
}

// Mode is the mode a request arriving now is served in.
func (s *modeSwitch) Mode() leasedwrite.Mode { return *s.current.Load() }

// switchTo serves requests routed from now on in worse; false when the
// switch was thrown already.
func (s *modeSwitch) switchTo(worse leasedwrite.Mode) bool {
	if !s.switched.CompareAndSwap(false, true) {
		return false
	}
	s.current.Store(&worse)
	return true
}

// Switched reports whether a re-probe switched the mode.
func (s *modeSwitch) Switched() bool { return s.switched.Load() }

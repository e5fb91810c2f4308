package proxy

import "sync/atomic"

// LeaseSwitch lets a backend served without leases be switched to leasing
// while s3cond runs: a background probe that finds the store's conditions
// no longer atomic (internal/app) calls SwitchToLease, and every request
// routed after that sees the leased view of the backend in its place. It
// never switches back: a store found racy once is leased until a restart
// probes it again.
type LeaseSwitch struct{ leased atomic.Pointer[Backend] }

// SwitchToLease makes requests routed from now on use leased, a copy of
// the backend with its conditional writes leased. Writes already routed
// finish as they began.
func (s *LeaseSwitch) SwitchToLease(leased *Backend) { s.leased.Store(leased) }

// Switched reports whether SwitchToLease was called.
func (s *LeaseSwitch) Switched() bool { return s.leased.Load() != nil }

// serving is the view of b a request uses: the leased copy once b's switch
// has been thrown, b itself otherwise.
func (b *Backend) serving() *Backend {
	if b.Switch != nil {
		if leased := b.Switch.leased.Load(); leased != nil {
			return leased
		}
	}
	return b
}

// sameBackend reports whether a request served by b (as routed, possibly
// the leased view) is served by configured, a backend as configured: the
// leased view shares its original's switch, and no two backends share one.
func (b *Backend) sameBackend(configured *Backend) bool {
	return b == configured || b.Switch != nil && b.Switch == configured.Switch
}

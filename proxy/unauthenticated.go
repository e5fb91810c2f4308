package proxy

import (
	"time"

	"github.com/s3cond/s3cond/s3err"
)

// Bounds on what anyone may make s3cond hold before it knows who is
// asking (docs/security.md, "Connection caps").
const (
	// DefaultPostFormTimeout is the total time a POST Object form's fields
	// may take to arrive.
	DefaultPostFormTimeout = 30 * time.Second
	// DefaultMaxUnauthenticated is how many requests may be in flight
	// before passing signature or policy verification.
	DefaultMaxUnauthenticated = 256
)

// unauthenticatedSlots counts the requests in flight that have not yet
// passed verification: a form being read, a CORS preflight, a signature
// being checked. Each holds a slot until it is verified or answered.
type unauthenticatedSlots chan struct{}

func newUnauthenticatedSlots(n int) unauthenticatedSlots {
	if n <= 0 {
		n = DefaultMaxUnauthenticated
	}
	return make(unauthenticatedSlots, n)
}

// enterUnauthenticated takes a slot for c, or answers S3's 503 SlowDown
// when none is free.
func (p *Proxy) enterUnauthenticated(c *call) bool {
	select {
	case p.unauthenticated <- struct{}{}:
		c.unauthenticated = true
		return true
	default:
		p.fail(c, s3err.Newf(s3err.SlowDown, "Please reduce your request rate: too many requests are being authenticated."))
		return false
	}
}

// leaveUnauthenticated gives c's slot back, once, when it is verified or
// answered.
func (p *Proxy) leaveUnauthenticated(c *call) {
	if c.unauthenticated {
		c.unauthenticated = false
		<-p.unauthenticated
	}
}

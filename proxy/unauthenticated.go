package proxy

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/s3cond/s3cond/internal/frontconn"
	"github.com/s3cond/s3cond/s3err"
)

// Bounds on what anyone may make s3cond hold before it knows who is
// asking (docs/security.md, "Bounds per source and stage").
const (
	// DefaultPostFormTimeout is the total time a POST Object form's fields
	// may take to arrive.
	DefaultPostFormTimeout = 30 * time.Second
	// DefaultMaxUnauthenticated is how many unauthenticated requests (a
	// form being read, a preflight, an anonymous request) may be in flight.
	DefaultMaxUnauthenticated = 256
	// DefaultMaxUnauthenticatedPerSource is how many of them one client
	// address may have in flight.
	DefaultMaxUnauthenticatedPerSource = 32
	// DefaultMaxSignatureChecks is how many requests claiming a signature
	// may be in verification at once.
	DefaultMaxSignatureChecks = 1024
)

// admission holds the budgets a request is admitted under before it is
// verified. A request that claims a signature is checked under its own
// budget, held only while its headers are verified (no body is read), so
// it never queues behind anonymous work; anything else is unauthenticated
// work, bounded in total and per client address, and an anonymous read
// holds its slot until it is answered.
type admission struct {
	signed, unauthenticated chan struct{}
	mu                      sync.Mutex
	perSource               map[string]int
	maxPerSource            int
}

func newAdmission(o Options) *admission {
	return &admission{
		signed:          make(chan struct{}, positiveOr(o.MaxSignatureChecks, DefaultMaxSignatureChecks)),
		unauthenticated: make(chan struct{}, positiveOr(o.MaxUnauthenticated, DefaultMaxUnauthenticated)),
		perSource:       map[string]int{},
		maxPerSource:    positiveOr(o.MaxUnauthenticatedPerSource, DefaultMaxUnauthenticatedPerSource),
	}
}

func positiveOr(n, fallback int) int {
	if n <= 0 {
		return fallback
	}
	return n
}

// claimsSignature reports whether r says it is signed: an Authorization
// header, or a presigned URL's signature (SigV4's X-Amz-Signature, SigV2's
// Signature). A false claim buys nothing: it fails verification, which
// reads no body, and is answered and closed.
func claimsSignature(r *http.Request) bool {
	return r.Method != http.MethodOptions &&
		(r.Header["Authorization"] != nil || strings.Contains(r.URL.RawQuery, "Signature="))
}

// slot is the admission budget a call holds a slot of, until it is
// verified or answered; the zero slot holds none. A value, not a closure,
// so admitting a request allocates nothing.
type slot struct {
	held   slotKind
	source string // for unauthenticatedSlot: the client address
}

type slotKind uint8

const (
	noSlot slotKind = iota
	signedSlot
	unauthenticatedSlot
)

// enterSigned takes a slot of the signature checks, or reports none free.
func (a *admission) enterSigned() (slot, bool) {
	select {
	case a.signed <- struct{}{}:
		return slot{held: signedSlot}, true
	default:
		return slot{}, false
	}
}

// enterUnauthenticated takes a slot of source's and of everyone's
// unauthenticated work, or reports none free.
func (a *admission) enterUnauthenticated(source string) (slot, bool) {
	a.mu.Lock()
	if a.perSource[source] >= a.maxPerSource {
		a.mu.Unlock()
		return slot{}, false
	}
	a.perSource[source]++
	a.mu.Unlock()
	select {
	case a.unauthenticated <- struct{}{}:
		return slot{held: unauthenticatedSlot, source: source}, true
	default:
		a.leaveSource(source)
		return slot{}, false
	}
}

// leave gives s back.
func (a *admission) leave(s slot) {
	switch s.held {
	case signedSlot:
		<-a.signed
	case unauthenticatedSlot:
		<-a.unauthenticated
		a.leaveSource(s.source)
	}
}

func (a *admission) leaveSource(source string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.perSource[source]--; a.perSource[source] <= 0 {
		delete(a.perSource, source)
	}
}

// enterUnauthenticated admits c under its budget, or answers S3's 503
// SlowDown (and closes the connection: fail does for a request that never
// authenticated).
func (p *Proxy) enterUnauthenticated(c *call) bool {
	var s slot
	var ok bool
	if claimsSignature(c.r) {
		s, ok = p.admission.enterSigned()
	} else {
		s, ok = p.admission.enterUnauthenticated(frontconn.Source(c.r.RemoteAddr))
	}
	if !ok {
		p.fail(c, s3err.Newf(s3err.SlowDown, "Please reduce your request rate: too many requests are being authenticated."))
		return false
	}
	c.admission = s
	return true
}

// leaveUnauthenticated gives c's slot back, once, when it is verified or
// answered.
func (p *Proxy) leaveUnauthenticated(c *call) {
	p.admission.leave(c.admission)
	c.admission = slot{}
}

// closeIfUnauthenticated asks net/http to close c's connection after its
// error answer when no request on it has authenticated: a client refused
// before it proved who it is keeps no keep-alive connection (and no slot
// of the connection cap) open.
func closeIfUnauthenticated(c *call) {
	if c.auth == nil || c.auth.Anonymous {
		c.w.Header().Set("Connection", "close")
	}
}

package etcdstore

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Bounds of how long after its TTL an etcd row may linger: a quarter of the
// TTL, within these limits.
const (
	minRowLinger = time.Second
	maxRowLinger = 15 * time.Minute
)

// rowLeases hands out the etcd leases that rows are attached to, so etcd
// deletes a row once its TTL has passed. Granting a lease costs a Raft round
// trip of its own, so writes share one: a lease granted for TTL + linger
// serves every later row whose TTL it still covers, until that TTL passes
// its end (with the default 1 h TTL: one grant per 15 minutes per process,
// and a dead row lingers at most 15 minutes past its TTL). A row whose TTL
// the current lease would overshoot by more than twice the linger (a shorter
// TTL than usual) gets a lease of its own.
//
// A row is never deleted before its TTL: the lease's end is estimated from
// the time before the grant was sent, and etcd only ever extends a lease
// (a new leader restarts every lease's countdown).
type rowLeases struct {
	client clientv3.Lease

	mu   sync.Mutex // held across a grant: concurrent writers share it
	id   clientv3.LeaseID
	ends time.Time // the lease ends no earlier than this
}

func newRowLeases(client clientv3.Lease) *rowLeases { return &rowLeases{client: client} }

// leaseFor returns a lease that ends no earlier than until.
func (p *rowLeases) leaseFor(ctx context.Context, until time.Time) (clientv3.LeaseID, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	linger := rowLinger(until.Sub(now))
	if p.id != 0 && !p.ends.Before(until) && p.ends.Sub(until) <= 2*linger {
		return p.id, nil
	}
	seconds := max(int64(math.Ceil((until.Sub(now) + linger).Seconds())), 1)
	resp, err := p.client.Grant(ctx, seconds)
	if err != nil {
		return 0, fmt.Errorf("grant an etcd lease of %ds for lease rows: %w", seconds, err)
	}
	// etcd may raise a short TTL to its minimum; never lowers it.
	p.id, p.ends = resp.ID, now.Add(time.Duration(resp.TTL)*time.Second)
	return p.id, nil
}

// forget drops id, which etcd no longer knows, so the next write gets a
// fresh lease.
func (p *rowLeases) forget(id clientv3.LeaseID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.id == id {
		p.id, p.ends = 0, time.Time{}
	}
}

// rowLinger is how much longer than its TTL a row may be kept.
func rowLinger(ttl time.Duration) time.Duration {
	return min(max(ttl/4, minRowLinger), maxRowLinger)
}

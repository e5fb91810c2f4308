package dynamolease

import (
	"sync"
	"time"
)

// sightings remembers, per row, when this process first saw the row's
// current version, so the wait before a takeover (timeout × skew since the
// version was first seen) counts across Acquire calls. Without it each
// Acquire watched from zero and gave up at its wait budget (10 s by default),
// far short of timeout × skew (60 s): a row whose holder crashed stayed
// locked until its TTL.
//
// Counting across calls is as safe as one waiter watching all along: a
// version names one write of the row (generation, writer, TTL, timeout), a
// row's generation never goes back, and a row removed and written anew
// (by TTL) carries another first generation (random), owner and TTL. So seeing the same version again
// means the row was not written in between.
//
// The memory is bounded: an entry goes when the row is seen changed, when
// this process wins the row, when nobody asked for it for twice its
// takeover wait, and (the one closest to that first) when maxSightings rows
// are remembered. Forgetting a row only makes the next waiter start from zero.
type sightings struct {
	mu        sync.Mutex
	rows      map[localKey]*sighting
	max       int
	nextSweep time.Time
}

// maxSightings bounds the rows remembered (about 200 bytes each).
const maxSightings = 10000

// rowVersion identifies one write of a row.
type rowVersion struct {
	generation uint64
	owner      string
	ttl        int64 // epoch seconds, as stored
	timeout    time.Duration
}

type sighting struct {
	version   rowVersion
	firstSeen time.Time // monotonic
	forgetAt  time.Time // lastAsked + 2 × the row's takeover wait
}

func newSightings(max int) *sightings {
	return &sightings{rows: map[localKey]*sighting{}, max: max}
}

func versionOf(r *Record) rowVersion {
	v := rowVersion{generation: r.Generation, owner: r.Owner, timeout: r.Timeout}
	if !r.TTL.IsZero() {
		v.ttl = r.TTL.Unix()
	}
	return v
}

// firstSeen returns when this process first saw row's version of k,
// recording now if it had not seen it. staleAfter is the row's takeover
// wait; an entry is forgotten after twice that without being asked for.
func (s *sightings) firstSeen(k localKey, row *Record, now time.Time, staleAfter time.Duration) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := versionOf(row)
	e := s.rows[k]
	if e == nil || e.version != v {
		if e == nil {
			s.makeRoomLocked(now)
		}
		e = &sighting{version: v, firstSeen: now}
		s.rows[k] = e
	}
	e.forgetAt = now.Add(2 * staleAfter)
	return e.firstSeen
}

// backdate moves the first sighting of row's version of k to seen if that
// is earlier: this process wrote that version itself at seen.
func (s *sightings) backdate(k localKey, row *Record, seen time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.rows[k]; e != nil && e.version == versionOf(row) && seen.Before(e.firstSeen) {
		e.firstSeen = seen
	}
}

// restart makes row's version of k count as first seen at now.
func (s *sightings) restart(k localKey, row *Record, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.rows[k]; e != nil && e.version == versionOf(row) {
		e.firstSeen = now
	}
}

// forget drops k: the row changed hands through this process.
func (s *sightings) forget(k localKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.rows, k)
}

func (s *sightings) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.rows)
}

// makeRoomLocked drops entries nobody asked for in a while (at most every
// sweep interval, or when full), then, if still full, the one closest to
// being forgotten.
func (s *sightings) makeRoomLocked(now time.Time) {
	full := len(s.rows) >= s.max
	if !full && now.Before(s.nextSweep) {
		return
	}
	var oldestKey localKey
	var oldest *sighting
	for k, e := range s.rows {
		if !now.Before(e.forgetAt) {
			delete(s.rows, k)
			continue
		}
		if oldest == nil || e.forgetAt.Before(oldest.forgetAt) {
			oldestKey, oldest = k, e
		}
	}
	if len(s.rows) >= s.max && oldest != nil {
		delete(s.rows, oldestKey)
	}
	s.nextSweep = now.Add(sweepInterval)
}

// sweepInterval spaces the sweeps for forgotten rows.
const sweepInterval = time.Minute

package dynamolease

import (
	"sync"
	"time"
)

// localKey names one lease row.
type localKey struct{ path, etag string }

// turn identifies one Acquire call in the local queue. It has a field so that
// every allocation has its own address (pointers to zero-size values may
// compare equal).
type turn struct{ _ byte }

// keyState is what this process knows about one row: whether one of its own
// goroutines is already acquiring or holding it. Local contenders queue on it
// instead of all polling the table, and wake the moment the holder lets go.
type keyState struct {
	refs    int           // goroutines acquiring the key, plus live leases on it
	owner   *turn         // the Acquire whose turn it is; nil when none
	held    heldLease     // what owner holds; zero while it is still acquiring
	changed chan struct{} // closed (and replaced) whenever the state above changes
}

// heldLease is the row generation a local holder wrote, and when: this
// process saw that generation at acquired, so a local waiter that bypasses a
// stale holder may count its wait from then.
type heldLease struct {
	generation uint64
	owner      string
	acquired   time.Time
	staleAt    time.Time
}

// localQueue holds the per-key states of one Committer; entries go away when
// nobody uses them.
type localQueue struct {
	mu   sync.Mutex
	keys map[localKey]*keyState
}

func newLocalQueue() *localQueue { return &localQueue{keys: map[localKey]*keyState{}} }

func (q *localQueue) join(k localKey) *keyState {
	q.mu.Lock()
	defer q.mu.Unlock()
	st := q.keys[k]
	if st == nil {
		st = &keyState{changed: make(chan struct{})}
		q.keys[k] = st
	}
	st.refs++
	return st
}

func (q *localQueue) leave(k localKey, st *keyState) {
	q.mu.Lock()
	defer q.mu.Unlock()
	st.refs--
	if st.refs == 0 {
		delete(q.keys, k)
	}
}

// takeTurn gives me the key if no local goroutine has it. Otherwise it
// returns a channel closed on the next change, and when the current local
// holder's lease goes stale (zero while that goroutine is still acquiring).
func (q *localQueue) takeTurn(st *keyState, me *turn) (ok bool, changed <-chan struct{}, held heldLease) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if st.owner == nil || st.owner == me {
		st.owner, st.held = me, heldLease{}
		return true, nil, heldLease{}
	}
	return false, st.changed, st.held
}

// holding records the lease me now holds (others may take it over after
// held.staleAt), so that a lease this process leaked cannot block its own waiters
// for longer than it would block another process.
func (q *localQueue) holding(st *keyState, me *turn, held heldLease) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if me != nil && st.owner == me {
		st.held = held
		q.broadcastLocked(st)
	}
}

// endTurn lets the next local contender go, and wakes every local waiter
// (including any that bypassed the queue and are polling the table).
func (q *localQueue) endTurn(st *keyState, me *turn) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if me != nil && st.owner == me {
		st.owner, st.held = nil, heldLease{}
	}
	q.broadcastLocked(st)
}

// contended reports whether another local goroutine is acquiring the key
// besides the one that holds it.
func (q *localQueue) contended(st *keyState) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return st.refs > 1
}

func (q *localQueue) changedChan(st *keyState) <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	return st.changed
}

func (q *localQueue) broadcastLocked(st *keyState) {
	close(st.changed)
	st.changed = make(chan struct{})
}

package testservers

import (
	"net/http"
	"sync/atomic"
)

// RacyLaterStore stands for a store that was atomic when s3cond started and
// races later: upgraded in place to a release whose CopyObject checks its
// destination condition, then writes (SeaweedFS 4.53, issue 33). Until
// BecomeRacy it is NewAtomicStore; after, NewRacyCopyStore on the same
// objects.
type RacyLaterStore struct {
	raced         atomic.Bool
	atomic, racy  http.Handler
	installedOnce atomic.Bool
	// before and after make the store's two faces (nil: NewAtomicStore
	// and NewRacyCopyStore).
	before, after func(http.Handler) http.Handler
}

// NewRacyLaterStore returns the store; pass its Fault to StartFaultyStore.
func NewRacyLaterStore() *RacyLaterStore {
	return &RacyLaterStore{before: NewAtomicStore, after: NewRacyCopyStore}
}

// Fault wraps the store's objects (StartFaultyStore's inner), once.
func (s *RacyLaterStore) Fault(inner http.Handler) http.Handler {
	if !s.installedOnce.CompareAndSwap(false, true) {
		panic("RacyLaterStore.Fault called twice: one store, one set of objects")
	}
	s.atomic, s.racy = s.before(inner), s.after(inner)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.raced.Load() {
			s.racy.ServeHTTP(w, r)
			return
		}
		s.atomic.ServeHTTP(w, r)
	})
}

// BecomeRacy makes every request from now on meet the racy CopyObject.
func (s *RacyLaterStore) BecomeRacy() { s.raced.Store(true) }

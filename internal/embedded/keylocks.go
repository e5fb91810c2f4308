package embedded

import (
	"context"
	"sync"
)

// keyLocks is one lock per key, held only while someone uses it, so the map
// does not grow with the number of keys ever written.
type keyLocks struct {
	mu   sync.Mutex
	keys map[string]*keyLock
}

type keyLock struct {
	token chan struct{} // holds one value while the lock is held
	users int           // holders and waiters; guarded by keyLocks.mu
}

func newKeyLocks() *keyLocks { return &keyLocks{keys: map[string]*keyLock{}} }

// lock waits for key's lock, or until ctx ends; unlock must be called once
// the lock is no longer needed.
func (k *keyLocks) lock(ctx context.Context, key string) (unlock func(), err error) {
	k.mu.Lock()
	l := k.keys[key]
	if l == nil {
		l = &keyLock{token: make(chan struct{}, 1)}
		k.keys[key] = l
	}
	l.users++
	k.mu.Unlock()

	select {
	case l.token <- struct{}{}:
		return func() {
			<-l.token
			k.leave(key, l)
		}, nil
	case <-ctx.Done():
		k.leave(key, l)
		return nil, ctx.Err()
	}
}

func (k *keyLocks) leave(key string, l *keyLock) {
	k.mu.Lock()
	defer k.mu.Unlock()
	l.users--
	if l.users == 0 {
		delete(k.keys, key)
	}
}

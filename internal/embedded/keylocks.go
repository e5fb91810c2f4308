package embedded

import (
	"context"
	"errors"
	"io"
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

// keyWriteGate is one write's hold on its key's lock: taken at most once,
// when the write is about to be stored, and let go when the request ends.
type keyWriteGate struct {
	ctx   context.Context
	locks *keyLocks
	key   string

	mu     sync.Mutex
	unlock func()
	ended  bool
}

// acquire takes the key's lock unless this write holds it already or has
// ended.
func (g *keyWriteGate) acquire() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.unlock != nil || g.ended {
		return nil
	}
	unlock, err := g.locks.lock(g.ctx, g.key)
	if err != nil {
		return err
	}
	g.unlock = unlock
	return nil
}

// release lets the lock go, if held; later acquires do nothing.
func (g *keyWriteGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ended = true
	if g.unlock != nil {
		g.unlock()
		g.unlock = nil
	}
}

// lockAtEOF takes the write's key lock when the request body ends, before
// the end is reported: the handler stores the object only after it has read
// the whole body, so the lock covers the store and not the upload. Why it
// must not cover the upload: s3cond holds back the last bytes of a
// conditional upload until it holds the lease, and the lease may be held by
// another writer of the same key whose store would then wait for this one.
type lockAtEOF struct {
	io.ReadCloser
	gate *keyWriteGate
}

func (l *lockAtEOF) Read(p []byte) (int, error) {
	n, err := l.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		if lockErr := l.gate.acquire(); lockErr != nil {
			return n, lockErr
		}
	}
	return n, err
}

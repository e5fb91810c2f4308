package metrics

import (
	"sync"
	"sync/atomic"
)

// childCache remembers the child series of a metric vector per label key,
// made on first use (so that, as with WithLabelValues, a series appears once
// it has something to report). A hit is one lock-free map read, where
// WithLabelValues validates, hashes and searches the vector under a lock on
// every call: the backend transport and the lease table observe on every
// backend request and lease call. Keys must come from a bounded set.
type childCache[K comparable, T any] struct {
	mu       sync.Mutex // serialises additions
	children atomic.Pointer[map[K]T]
	// newChild makes the series for a key; it runs once per key.
	newChild func(K) T
}

func newChildCache[K comparable, T any](newChild func(K) T) *childCache[K, T] {
	return &childCache[K, T]{newChild: newChild}
}

func (c *childCache[K, T]) get(key K) T {
	if current := c.children.Load(); current != nil {
		if child, ok := (*current)[key]; ok {
			return child
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	current := c.children.Load()
	if current != nil {
		if child, ok := (*current)[key]; ok {
			return child
		}
	}
	// The map is replaced, never changed, so that readers need no lock.
	next := make(map[K]T, 1)
	if current != nil {
		for k, v := range *current {
			next[k] = v
		}
	}
	child := c.newChild(key)
	next[key] = child
	c.children.Store(&next)
	return child
}

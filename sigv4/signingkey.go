package sigv4

import (
	"crypto/hmac"
	"crypto/sha256"
	"hash"
	"sync"
)

// maxCachedSigningKeys bounds the derived-key cache. Keys change daily per
// (access key, region), so a proxy with a few hundred clients stays well
// below it; when full the cache starts over, which costs four HMACs per key.
const maxCachedSigningKeys = 1024

// deriveSigningKey computes SigV4's signing key
// HMAC(HMAC(HMAC(HMAC("AWS4"+secret, date), region), service), "aws4_request").
func deriveSigningKey(secret, date, region, service string) [sha256.Size]byte {
	k := macSHA256([]byte("AWS4"+secret), date)
	k = macSHA256(k, region)
	k = macSHA256(k, service)
	k = macSHA256(k, scopeTerminator)
	var key [sha256.Size]byte
	copy(key[:], k)
	return key
}

func macSHA256(key []byte, data string) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(data))
	return mac.Sum(nil)
}

// signingKeyID identifies a derived key. The secret is part of it so that a
// rotated secret for the same access key never reuses a stale key.
type signingKeyID struct {
	accessKeyID, secret, date, region, service string
}

// signingKey is a derived key with the crypto/hmac states keyed by it.
// hmac.New hashes the key's pads each time it is called; a state taken from
// the pool and Reset starts from the keyed state it already holds, so a
// signature costs only the hashing of its string to sign.
type signingKey struct {
	bytes [sha256.Size]byte
	macs  sync.Pool // of hash.Hash from hmac.New(sha256.New, bytes)
}

func newSigningKey(key [sha256.Size]byte) *signingKey {
	k := &signingKey{bytes: key}
	k.macs.New = func() any { return hmac.New(sha256.New, k.bytes[:]) }
	return k
}

// sign appends HMAC-SHA256(key, data) to dst.
func (k *signingKey) sign(dst, data []byte) []byte {
	mac := k.macs.Get().(hash.Hash)
	mac.Reset()
	mac.Write(data)
	dst = mac.Sum(dst)
	k.macs.Put(mac)
	return dst
}

// signingKeyCache memoises derived keys. The zero value is ready to use and
// safe for concurrent use.
type signingKeyCache struct {
	mu   sync.Mutex
	keys map[signingKeyID]*signingKey
}

// get returns the signing key for id, deriving and caching it on a miss.
func (c *signingKeyCache) get(id signingKeyID) *signingKey {
	c.mu.Lock()
	key, ok := c.keys[id]
	c.mu.Unlock()
	if ok {
		return key
	}
	key = newSigningKey(deriveSigningKey(id.secret, id.date, id.region, id.service))
	c.mu.Lock()
	if c.keys == nil || len(c.keys) >= maxCachedSigningKeys {
		c.keys = make(map[signingKeyID]*signingKey)
	}
	c.keys[id] = key
	c.mu.Unlock()
	return key
}

// len reports how many keys are cached (for tests).
func (c *signingKeyCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.keys)
}

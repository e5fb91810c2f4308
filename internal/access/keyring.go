// Package access holds the client keyring: the secrets s3cond verifies client
// signatures with, and which buckets each key may read or write.
package access

import (
	"fmt"
	"path"

	"github.com/s3cond/s3cond/internal/config"
)

// Keyring answers SigV4 secret lookups and bucket authorisation. It is
// immutable after NewKeyring, so it is safe for concurrent use.
type Keyring struct {
	keys map[string]*entry
	// anonymousRead are the buckets unsigned clients may read (names, "*"
	// or path.Match patterns); none by default.
	anonymousRead []string
}

// Option adds to a keyring what is not a client key.
type Option func(*Keyring)

// AnonymousRead grants unsigned clients read access to buckets (names,
// "*" or path.Match patterns, as for keys); config's anonymous.buckets.
func AnonymousRead(buckets []string) Option {
	return func(k *Keyring) { k.anonymousRead = append([]string(nil), buckets...) }
}

type entry struct {
	secret   secret
	buckets  []string // names, "*" or path.Match patterns
	canWrite bool
}

// secret keeps a client secret out of fmt output, so a keyring or entry
// printed by mistake (%v, %+v, %#v) shows no secret.
type secret string

func (secret) String() string   { return "****" }
func (secret) GoString() string { return `"****"` }

// NewKeyring builds a keyring from validated config keys (config.Load has
// resolved secret_env into Secret). A later duplicate access key ID would be a
// config error; here the first one wins.
func NewKeyring(keys []config.Key, opts ...Option) *Keyring {
	k := &Keyring{keys: make(map[string]*entry, len(keys))}
	for _, opt := range opts {
		opt(k)
	}
	for _, key := range keys {
		if _, dup := k.keys[key.AccessKeyID]; dup || key.AccessKeyID == "" {
			continue
		}
		k.keys[key.AccessKeyID] = &entry{
			secret:   secret(key.Secret),
			buckets:  append([]string(nil), key.Buckets...),
			canWrite: key.CanWrite(),
		}
	}
	return k
}

// Secret returns the secret for accessKeyID, for SigV4 verification. The
// caller compares the signatures it derives with hmac.Equal.
func (k *Keyring) Secret(accessKeyID string) (string, bool) {
	e, ok := k.keys[accessKeyID]
	if !ok {
		return "", false
	}
	return string(e.secret), true
}

// Known reports whether accessKeyID is configured.
func (k *Keyring) Known(accessKeyID string) bool {
	_, ok := k.keys[accessKeyID]
	return ok
}

// Allowed reports whether accessKeyID may use bucket for reading
// (write=false) or writing. bucket "" is the service level (ListBuckets),
// allowed to every known key. A key's bucket entries are names, "*" for all,
// or path.Match patterns such as "logs-*"; bucket is the client-side name.
func (k *Keyring) Allowed(accessKeyID, bucket string, write bool) bool {
	e, ok := k.keys[accessKeyID]
	if !ok {
		return false
	}
	if write && !e.canWrite {
		return false
	}
	if bucket == "" {
		return true
	}
	return matchesAny(e.buckets, bucket)
}

// AnonymousAllowed reports whether unsigned clients may read bucket (the
// client-side name). The grant is read-only: the caller allows only reads.
func (k *Keyring) AnonymousAllowed(bucket string) bool {
	return bucket != "" && matchesAny(k.anonymousRead, bucket)
}

// BucketMatcher reports whether a client bucket is one of patterns (names,
// "*" or path.Match patterns, as for keys): config's write policies.
func BucketMatcher(patterns []string) func(bucket string) bool {
	patterns = append([]string(nil), patterns...)
	return func(bucket string) bool { return bucket != "" && matchesAny(patterns, bucket) }
}

// matchesAny reports whether bucket is one of patterns: a name, "*" for
// all, or a path.Match pattern.
func matchesAny(patterns []string, bucket string) bool {
	for _, pattern := range patterns {
		if pattern == "*" || pattern == bucket {
			return true
		}
		// A malformed pattern matches nothing (config validation rejects
		// them; this keeps a hand-built keyring safe too).
		if matched, err := path.Match(pattern, bucket); err == nil && matched {
			return true
		}
	}
	return false
}

// String describes the keyring without any key material. fmt does not call
// String on unexported fields, so Keyring and entry each need their own.
func (k Keyring) String() string {
	return fmt.Sprintf("Keyring(%d keys, anonymous read %v)", len(k.keys), k.anonymousRead)
}

// GoString keeps %#v from reaching into the map of secrets.
func (k Keyring) GoString() string { return k.String() }

func (e entry) String() string {
	return fmt.Sprintf("key(buckets=%v, write=%v)", e.buckets, e.canWrite)
}

func (e entry) GoString() string { return e.String() }

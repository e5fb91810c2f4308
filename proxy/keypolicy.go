package proxy

import (
	"fmt"
	"strings"

	"github.com/s3cond/s3cond/s3err"
)

// KeyPolicy says which object keys s3cond lets through to a backend. A store
// that keeps objects as files resolves "a//b" and "a/./b" to the object "a/b",
// and may follow ".." out of the bucket; on such a store one object has many
// names, so leases keyed on the literal name would not serialise its writers,
// and a key granted in one bucket could reach another.
type KeyPolicy int

const (
	// KeyPolicyStrict (the default) refuses keys with ".", ".." or empty
	// segments, a leading "/", or a NUL byte: names a filesystem-backed store
	// resolves to another object, or cannot store.
	KeyPolicyStrict KeyPolicy = iota
	// KeyPolicyNormalize accepts "." and empty segments and leases the object
	// they resolve to; ".." and NUL are still refused.
	KeyPolicyNormalize
	// KeyPolicyOpaque accepts any key S3 accepts, for stores that treat keys
	// as opaque strings (AWS S3, Ceph RGW): the key names itself.
	KeyPolicyOpaque
)

var keyPolicyNames = map[string]KeyPolicy{"strict": KeyPolicyStrict, "normalize": KeyPolicyNormalize, "opaque": KeyPolicyOpaque}

// ParseKeyPolicy reads a key policy's configured name.
func ParseKeyPolicy(name string) (KeyPolicy, error) {
	if kp, ok := keyPolicyNames[name]; ok {
		return kp, nil
	}
	return 0, fmt.Errorf("unknown key policy %q (strict, normalize or opaque)", name)
}

func (kp KeyPolicy) String() string {
	for name, v := range keyPolicyNames {
		if v == kp {
			return name
		}
	}
	return fmt.Sprintf("KeyPolicy(%d)", int(kp))
}

// Check refuses a key the policy does not let reach the backend, with S3's
// 400 InvalidArgument naming the key as the argument.
func (kp KeyPolicy) Check(key string) error {
	if kp == KeyPolicyOpaque || key == "" {
		return nil
	}
	if strings.IndexByte(key, 0) >= 0 {
		return invalidKey(key, "contains a NUL byte")
	}
	// Cut rather than Split, which allocates: Check runs on every request.
	for rest, more := key, true; more; {
		var seg string
		seg, rest, more = strings.Cut(rest, "/")
		last := !more
		switch {
		case seg == "..":
			return invalidKey(key, "has a '..' segment, which a file-backed store resolves outside the key's directory")
		case kp == KeyPolicyNormalize:
		case seg == ".":
			return invalidKey(key, "has a '.' segment, which a file-backed store resolves to another key")
		case seg == "" && !last:
			// "dir/" (an empty final segment) is the usual folder marker.
			return invalidKey(key, "has an empty segment ('//' or a leading '/'), which a file-backed store resolves to another key")
		}
	}
	return nil
}

func invalidKey(key, why string) error {
	return s3err.Newf(s3err.InvalidArgument, "The object key %s; this s3cond refuses it (key_policy strict or normalize).", why).
		With("ArgumentName", "key").With("ArgumentValue", key)
}

// LeaseKey is the name under which writes to key are serialised: the object
// the backend will write. Under KeyPolicyNormalize that is the key with its
// "." and empty segments removed (a trailing "/" kept); otherwise the key.
// Call it only for keys Check accepted.
func (kp KeyPolicy) LeaseKey(key string) string {
	if kp != KeyPolicyNormalize {
		return key
	}
	segments := strings.Split(key, "/")
	kept := segments[:0]
	for _, seg := range segments {
		if seg != "" && seg != "." {
			kept = append(kept, seg)
		}
	}
	cleaned := strings.Join(kept, "/")
	if strings.HasSuffix(key, "/") && cleaned != "" {
		cleaned += "/"
	}
	return cleaned
}

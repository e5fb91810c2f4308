package proxy

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
)

// The client-facing identity. Behind s3cond every bucket, object and
// upload belongs to s3cond's backend principal, and a store such as
// versitygw names that principal by its access key ID in every Owner,
// Initiator and Grantee: relayed as they are, listings and ACLs would hand
// each client the key s3cond signs with. So each client is shown one
// identity of its own in the backend principal's place, in ID and
// DisplayName alike: 64 hex digits (the shape of an S3 canonical user ID),
// the HMAC-SHA256 of the client's access key ID under a fixed label.
// It is stable across restarts and s3cond instances, needs no
// configuration, and is computed from nothing the backend owns, so it says
// nothing about the backend key. It is no secret either: it stands in for
// a name S3 shows to anyone the ACL is shared with. An unsigned request
// (an anonymous read) is shown the identity of the empty key ID.
//
// Where a client names its identity in an ACL (an AccessControlPolicy body
// or an x-amz-grant-* header of PutBucketAcl or PutObjectAcl), s3cond
// names the backend principal in its place, so an ACL read, changed and
// written back keeps its owner's grant.

// clientIdentityLabel keys the HMAC; changing it renames every client.
const clientIdentityLabel = "s3cond client-facing owner identity v1"

// clientIdentity is the identity c's client is shown for the backend principal.
func clientIdentity(c *call) string {
	keyID := ""
	if c.auth != nil && !c.auth.Anonymous {
		keyID = c.auth.AccessKeyID
	}
	mac := hmac.New(sha256.New, []byte(clientIdentityLabel))
	mac.Write([]byte(keyID))
	return hex.EncodeToString(mac.Sum(nil))
}

// toClientIdentity renames the backend principal, by any of its names, to
// the client's identity; other principals keep their names.
func toClientIdentity(c *call) func(string) (string, bool) {
	identity := ""
	return func(name string) (string, bool) {
		for _, backendName := range c.backend.Identity {
			if name == backendName {
				if identity == "" {
					identity = clientIdentity(c)
				}
				return identity, true
			}
		}
		return "", false
	}
}

// toBackendIdentity renames the client's identity to the backend principal.
func toBackendIdentity(c *call) func(string) (string, bool) {
	identity := clientIdentity(c)
	return func(name string) (string, bool) {
		if name == identity && len(c.backend.Identity) > 0 {
			return c.backend.Identity[0], true
		}
		return "", false
	}
}

// backendGrantHeaders returns the x-amz-grant-* headers of c with the
// client's identity (id="...") named as the backend principal, only those
// that change; nil if none does.
func backendGrantHeaders(c *call) http.Header {
	if len(c.backend.Identity) == 0 {
		return nil
	}
	rename := toBackendIdentity(c)
	var changed http.Header
	for name, values := range c.r.Header {
		if !strings.HasPrefix(name, "X-Amz-Grant-") {
			continue
		}
		out := make([]string, len(values))
		differs := false
		for i, v := range values {
			out[i] = renameGrantees(v, rename)
			differs = differs || out[i] != v
		}
		if differs {
			if changed == nil {
				changed = http.Header{}
			}
			changed[name] = out
		}
	}
	return changed
}

// renameGrantees rewrites a grant header's list (id="a", emailAddress="b",
// uri="c"): an id that rename knows gets the new name; every other grantee
// is kept byte for byte. versitygw reads each entry as a bare account ID
// (no id="..."), so a bare entry rename knows is renamed too.
func renameGrantees(list string, rename func(string) (string, bool)) string {
	grantees := strings.Split(list, ",")
	for i, g := range grantees {
		key, value, ok := strings.Cut(strings.TrimSpace(g), "=")
		if !ok {
			if renamed, known := rename(strings.TrimSpace(g)); known {
				grantees[i] = leadingSpace(g) + renamed
			}
			continue
		}
		if !strings.EqualFold(strings.TrimSpace(key), "id") {
			continue
		}
		value = strings.TrimSpace(value)
		if unquoted, quoted := strings.CutPrefix(value, `"`); quoted {
			value = strings.TrimSuffix(unquoted, `"`)
		}
		if renamed, ok := rename(value); ok {
			grantees[i] = leadingSpace(g) + `id="` + renamed + `"`
		}
	}
	return strings.Join(grantees, ",")
}

func leadingSpace(s string) string { return s[:len(s)-len(strings.TrimLeft(s, " \t"))] }

// namesClientIdentity reports whether an ACL body may name c's identity,
// the cheap test before it is rewritten.
func namesClientIdentity(c *call, body []byte) bool {
	return len(c.backend.Identity) > 0 && bytes.Contains(body, []byte(clientIdentity(c)))
}

package e2e

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// Issue 23, items 3 and 6: versitygw names every owner, initiator and
// grantee by the access key that made it, and behind s3cond that is
// s3cond's backend key; it also sends Server: VERSITYGW and its own
// x-amz-id-2. Through s3cond, listings and ACLs show the client's own
// identity instead (signed or anonymous), no header names the store, and
// an ACL written back with that identity keeps working.
func TestAnswersNameTheClientIdentityNotTheBackendKey(t *testing.T) {
	env := NewEnv(t, WithConfig(func(c *Config) {
		c.Anonymous = &AnonymousConfig{Buckets: []string{"owned-public"}, Access: "read-only"}
	}))
	env.RequireProxy(t)
	// ACLs are enabled only where the object ownership allows them.
	created := Do(t, env.Endpoint, env.RW, RawRequest{Method: http.MethodPut, Path: "/owned-public",
		Header: http.Header{"X-Amz-Object-Ownership": {"ObjectWriter"}}})
	if created.Status != http.StatusOK {
		t.Fatalf("CreateBucket: %d %s", created.Status, created.Body)
	}
	if arn := created.Header.Get("X-Amz-Bucket-Arn"); arn != "" && !strings.HasSuffix(arn, ":owned-public") {
		t.Errorf("x-amz-bucket-arn %q", arn)
	}
	put := Do(t, env.Endpoint, env.RW, RawRequest{Method: http.MethodPut, Path: "/owned-public/obj", Body: []byte("x")})
	if put.Status != http.StatusOK {
		t.Fatalf("PutObject: %d %s", put.Status, put.Body)
	}
	backendKey := env.Backend.AccessKey
	noBackend := func(what string, resp *RawResponse) {
		t.Helper()
		if strings.Contains(string(resp.Body), backendKey) {
			t.Errorf("%s names the backend key %q: %s", what, backendKey, resp.Body)
		}
		for name, values := range resp.Header {
			for _, v := range values {
				if strings.Contains(v, backendKey) || strings.Contains(strings.ToUpper(v), "VERSITYGW") {
					t.Errorf("%s: header %s: %q", what, name, v)
				}
			}
		}
		if resp.Header.Get("X-Amz-Id-2") == "" {
			t.Errorf("%s: no x-amz-id-2", what)
		}
	}
	ownerID := regexp.MustCompile(`<Owner><ID>([^<]*)</ID>`)
	identityOf := func(what string, resp *RawResponse) string {
		t.Helper()
		if resp.Status != http.StatusOK {
			t.Fatalf("%s: status %d %s", what, resp.Status, resp.Body)
		}
		noBackend(what, resp)
		m := ownerID.FindStringSubmatch(string(resp.Body))
		if m == nil {
			t.Fatalf("%s shows no owner: %s", what, resp.Body)
		}
		return m[1]
	}

	mine := identityOf("ListBuckets", Do(t, env.Endpoint, env.RW, RawRequest{Method: http.MethodGet, Path: "/"}))
	for what, req := range map[string]RawRequest{
		"GetBucketAcl":                {Method: http.MethodGet, Path: "/owned-public", Query: url.Values{"acl": {""}}},
		"ListObjects":                 {Method: http.MethodGet, Path: "/owned-public"},
		"ListObjectsV2 (fetch-owner)": {Method: http.MethodGet, Path: "/owned-public", Query: url.Values{"list-type": {"2"}, "fetch-owner": {"true"}}},
	} {
		if got := identityOf(what, Do(t, env.Endpoint, env.RW, req)); got != mine {
			t.Errorf("%s shows owner %q, ListBuckets %q", what, got, mine)
		}
	}
	anonymous := Do(t, env.Endpoint, Credentials{}, RawRequest{Method: http.MethodGet, Path: "/owned-public", Unsigned: true})
	if got := identityOf("anonymous ListObjects", anonymous); got == mine {
		t.Errorf("an anonymous reader is shown the signed client's identity %q", got)
	}

	// The ACL the client read, written back as it is (by body, then by
	// grant header), names the client's identity; the store must still
	// find its owner's grant.
	acl := Do(t, env.Endpoint, env.RW, RawRequest{Method: http.MethodGet, Path: "/owned-public", Query: url.Values{"acl": {""}}})
	written := Do(t, env.Endpoint, env.RW, RawRequest{Method: http.MethodPut, Path: "/owned-public", Query: url.Values{"acl": {""}}, Body: acl.Body})
	if written.Status != http.StatusOK {
		t.Fatalf("PutBucketAcl with the ACL read back: %d %s", written.Status, written.Body)
	}
	noBackend("PutBucketAcl", written)
	granted := Do(t, env.Endpoint, env.RW, RawRequest{Method: http.MethodPut, Path: "/owned-public", Query: url.Values{"acl": {""}},
		// versitygw reads a grant header's entries as bare account IDs.
		Header: http.Header{"X-Amz-Grant-Full-Control": {mine}}})
	if granted.Status != http.StatusOK {
		t.Fatalf("PutBucketAcl granting the client's identity: %d %s", granted.Status, granted.Body)
	}
	after := Do(t, env.Endpoint, env.RW, RawRequest{Method: http.MethodGet, Path: "/owned-public", Query: url.Values{"acl": {""}}})
	if got := identityOf("GetBucketAcl after PutBucketAcl", after); got != mine ||
		!strings.Contains(string(after.Body), "<ID>"+mine+"</ID>") || !strings.Contains(string(after.Body), "FULL_CONTROL") {
		t.Errorf("the ACL written back lost its owner's grant: %s", after.Body)
	}

	// ListBuckets' own error branch relayed the store's document verbatim:
	// a repeated signed header makes versitygw refuse s3cond's signature.
	refused := Do(t, env.Endpoint, env.RW, RawRequest{Method: http.MethodGet, Path: "/",
		Header: http.Header{"X-Amz-Meta-A": {"", "second"}}})
	if refused.Status < 400 {
		t.Logf("versitygw accepted the repeated header on ListBuckets (%d)", refused.Status)
	}
	noBackend("ListBuckets refused by the store", refused)
	backendHost := strings.TrimPrefix(env.Backend.Endpoint, "http://")
	for _, leak := range []string{backendHost, "CanonicalRequest", "StringToSign"} {
		if strings.Contains(string(refused.Body), leak) {
			t.Errorf("ListBuckets error names %q: %s", leak, refused.Body)
		}
	}
}

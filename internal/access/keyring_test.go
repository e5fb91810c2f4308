package access

import (
	"fmt"
	"strings"
	"testing"

	"github.com/s3cond/s3cond/internal/config"
)

const (
	readerSecret = "reader-secret-value"
	writerSecret = "writer-secret-value"
)

func testKeyring() *Keyring {
	return NewKeyring([]config.Key{
		{AccessKeyID: "reader", Secret: readerSecret, Buckets: []string{"reports", "logs-*"}, Access: config.AccessReadOnly},
		{AccessKeyID: "writer", Secret: writerSecret, Buckets: []string{"*"}, Access: config.AccessReadWrite},
		{AccessKeyID: "team", Secret: "team-secret", Buckets: []string{"team-?", "[bad"}, Access: config.AccessReadWrite},
		{AccessKeyID: "reader", Secret: "duplicate-secret", Buckets: []string{"*"}, Access: config.AccessReadWrite},
	})
}

func TestSecret(t *testing.T) {
	k := testKeyring()
	if s, ok := k.Secret("reader"); !ok || s != readerSecret {
		t.Errorf("Secret(reader) = %q, %v; the first entry of a duplicate ID must win", s, ok)
	}
	if s, ok := k.Secret("nobody"); ok || s != "" {
		t.Errorf("Secret(nobody) = %q, %v", s, ok)
	}
	if !k.Known("writer") || k.Known("nobody") {
		t.Error("Known is wrong")
	}
}

func TestAllowed(t *testing.T) {
	k := testKeyring()
	cases := []struct {
		key, bucket string
		write, want bool
	}{
		{"reader", "", false, true}, // ListBuckets
		{"reader", "reports", false, true},
		{"reader", "reports", true, false}, // read-only key
		{"reader", "logs-2024", false, true},
		{"reader", "logs", false, false}, // pattern needs the dash
		{"reader", "other", false, false},
		{"writer", "", true, true},
		{"writer", "anything", true, true},
		{"team", "team-a", true, true},
		{"team", "team-ab", true, false},
		{"team", "b", false, false}, // a malformed pattern ("[bad") matches nothing
		{"nobody", "", false, false},
		{"nobody", "reports", false, false},
	}
	for _, c := range cases {
		if got := k.Allowed(c.key, c.bucket, c.write); got != c.want {
			t.Errorf("Allowed(%q, %q, write=%v) = %v, want %v", c.key, c.bucket, c.write, got, c.want)
		}
	}
}

func TestNoSecretInPrintedForms(t *testing.T) {
	k := testKeyring()
	var forms []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		forms = append(forms, fmt.Sprintf(verb, k), fmt.Sprintf(verb, *k), fmt.Sprintf(verb, k.keys["reader"]))
	}
	for _, form := range forms {
		for _, secret := range []string{readerSecret, writerSecret, "team-secret"} {
			if strings.Contains(form, secret) {
				t.Errorf("printed keyring shows a secret: %s", form)
			}
		}
	}
}

func TestKeyringDoesNotAliasConfig(t *testing.T) {
	keys := []config.Key{{AccessKeyID: "k", Secret: "s", Buckets: []string{"a-bucket"}, Access: config.AccessReadOnly}}
	k := NewKeyring(keys)
	keys[0].Buckets[0] = "other"
	if !k.Allowed("k", "a-bucket", false) || k.Allowed("k", "other", false) {
		t.Error("changing the config slice after NewKeyring changed the keyring")
	}
}

func TestDefaultDevelopmentKey(t *testing.T) {
	k := NewKeyring(config.Default().Keys)
	if s, ok := k.Secret(config.DevAccessKeyID); !ok || s != config.DevSecret {
		t.Fatalf("dev key missing")
	}
	if !k.Allowed(config.DevAccessKeyID, "any-bucket", true) {
		t.Error("dev key should write everywhere")
	}
}

func TestAnonymousReadGrant(t *testing.T) {
	if testKeyring().AnonymousAllowed("reports") {
		t.Error("a keyring without an anonymous grant lets anonymous clients read")
	}
	k := NewKeyring(config.Default().Keys, AnonymousRead([]string{"public", "assets-*"}))
	for bucket, want := range map[string]bool{"public": true, "assets-eu": true, "private": false, "": false, "publicity": false} {
		if got := k.AnonymousAllowed(bucket); got != want {
			t.Errorf("AnonymousAllowed(%q) = %v, want %v", bucket, got, want)
		}
	}
	if k.Allowed("", "public", false) {
		t.Error("the anonymous grant leaked into the keyed grants (empty access key ID)")
	}
}

func TestBucketMatcherTakesPatternsAsGrantsDo(t *testing.T) {
	match := BucketMatcher([]string{"ledger", "archive-*", "team-?"})
	for bucket, want := range map[string]bool{
		"ledger": true, "archive-2026": true, "team-a": true,
		"ledgers": false, "archive": false, "team-ab": false, "": false,
	} {
		if got := match(bucket); got != want {
			t.Errorf("match(%q) = %v, want %v", bucket, got, want)
		}
	}
	if BucketMatcher(nil)("ledger") {
		t.Error("an empty policy matched a bucket")
	}
	if !BucketMatcher([]string{"*"})("any-bucket") {
		t.Error(`"*" did not match every bucket`)
	}
}

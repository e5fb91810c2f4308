package proxy

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/s3err"
)

func TestKeyPolicyCheck(t *testing.T) {
	cases := []struct {
		key                       string
		strict, normalize, opaque bool // accepted?
	}{
		{"a/b", true, true, true},
		{"dir/", true, true, true},
		{"a.b/..c/...", true, true, true},
		{"p//k", false, true, true},
		{"/k", false, true, true},
		{"p/./k", false, true, true},
		{"./k", false, true, true},
		{"../secret/s.txt", false, false, true},
		{"a/../../etc", false, false, true},
		{"a/..", false, false, true},
		{"a\x00b", false, false, true},
	}
	for _, tc := range cases {
		for kp, want := range map[KeyPolicy]bool{KeyPolicyStrict: tc.strict, KeyPolicyNormalize: tc.normalize, KeyPolicyOpaque: tc.opaque} {
			err := kp.Check(tc.key)
			if (err == nil) != want {
				t.Errorf("%v.Check(%q) = %v, want accepted=%v", kp, tc.key, err, want)
			}
			var e *s3err.Error
			if err != nil && (!errors.As(err, &e) || e.Code != s3err.InvalidArgument) {
				t.Errorf("%v.Check(%q) = %v, want InvalidArgument", kp, tc.key, err)
			}
		}
	}
}

func TestKeyPolicyLeaseKeyNamesTheResolvedObject(t *testing.T) {
	for key, want := range map[string]string{
		"p/k": "p/k", "p//k": "p/k", "p/./k": "p/k", "/p/k": "p/k", "dir//": "dir/", "./": "",
	} {
		if got := KeyPolicyNormalize.LeaseKey(key); got != want {
			t.Errorf("LeaseKey(%q) = %q, want %q", key, got, want)
		}
	}
	if got := KeyPolicyOpaque.LeaseKey("p//k"); got != "p//k" {
		t.Errorf("opaque LeaseKey = %q", got)
	}
}

func TestParseKeyPolicy(t *testing.T) {
	for _, name := range []string{"strict", "normalize", "opaque"} {
		kp, err := ParseKeyPolicy(name)
		if err != nil || kp.String() != name {
			t.Errorf("ParseKeyPolicy(%q) = %v, %v", name, kp, err)
		}
	}
	if _, err := ParseKeyPolicy("loose"); err == nil {
		t.Error("ParseKeyPolicy accepted an unknown name")
	}
}

// TestStrictKeyPolicyRefusesBeforeTheBackend sends keys a file-backed store
// resolves to another object, in the URL and as a copy source: each gets 400
// InvalidArgument and the backend sees no request naming a key (only the
// HeadBucket of S3's order of checks, bucketfirst.go).
func TestStrictKeyPolicyRefusesBeforeTheBackend(t *testing.T) {
	var backendRequests atomic.Int32
	f := newFixtureWith(t, fixtureOptions{backendHook: func(r *http.Request) {
		if r.Method != http.MethodHead || strings.Trim(r.URL.Path, "/") != bucketName {
			backendRequests.Add(1)
		}
	}})
	ctx := context.Background()
	if _, err := f.put(t, "src", "source", nil); err != nil {
		t.Fatal(err)
	}
	before := backendRequests.Load()
	for _, key := range []string{"../secret/s.txt", "p//k", "p/./k", "/k", "a/.."} {
		if _, err := f.put(t, key, "x", nil); errorCode(err) != "InvalidArgument" {
			t.Errorf("put %q: %v, want InvalidArgument", key, err)
		}
		_, err := f.client.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(bucketName), Key: aws.String("dst"),
			CopySource: aws.String(bucketName + "/" + key)})
		if errorCode(err) != "InvalidArgument" {
			t.Errorf("copy from %q: %v, want InvalidArgument", key, err)
		}
		_, err = f.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucketName), Key: aws.String(key),
			Body: strings.NewReader("x"), IfNoneMatch: aws.String("*")})
		if errorCode(err) != "InvalidArgument" {
			t.Errorf("conditional put %q: %v, want InvalidArgument", key, err)
		}
	}
	if n := backendRequests.Load() - before; n != 0 {
		t.Fatalf("the backend received %d requests for refused keys", n)
	}
	if _, err := f.put(t, "dir/", "", nil); err != nil {
		t.Fatalf("a folder marker key was refused: %v", err)
	}
}

package e2e

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// boto3Flavours are the two boto3s users have: pip's (the first python3 on
// PATH) and Debian's python3-boto3 (botocore 1.29 on bookworm, what distro
// users run), driven by the same script.
var boto3Flavours = []struct{ name, program string }{
	{"boto3", "python3"},
	{"boto3-debian", "debian-boto3"},
}

func newBoto3Flavour(t *testing.T, e *Env, program string) scriptCompat {
	script, err := filepath.Abs(filepath.Join("scripts", "compat_boto3.py"))
	if err != nil {
		t.Fatal(err)
	}
	return scriptCompat{e: e, program: program, script: script, dir: t.TempDir()}
}

// TestBoto3sAsS3Reads (issue 32): requests S3 accepts from either boto3,
// each checked against what versitygw stored. Debian's botocore writes a
// boolean header as "True" (DeleteObjects with BypassGovernanceRetention,
// as ceph s3-tests' clean-up sends; CreateBucket with object lock), which
// s3cond refused with 400 InvalidArgument; both boto3s encode a '?' in a
// copy source's key as %3F (s3-tests' test_multipart_copy_special_names),
// which s3cond refused as ambiguous.
func TestBoto3sAsS3Reads(t *testing.T) {
	e := NewEnv(t)
	store := e.BackendClient()
	for i, flavour := range boto3Flavours {
		t.Run(flavour.name, func(t *testing.T) {
			client := newBoto3Flavour(t, e, flavour.program)
			ctx := t.Context()
			bucket := fmt.Sprintf("boto3s-%d", i)
			CreateBucket(t, store, bucket)

			t.Run("delete-objects-quiet-bypass", func(t *testing.T) {
				putBytes(t, ctx, store, bucket, "gone-1", []byte("1"))
				putBytes(t, ctx, store, bucket, "gone-2", []byte("2"))
				r, err := client.run(t, "delete-quiet", bucket, "gone-1", "gone-2")
				if err != nil || len(r.Keys) != 0 {
					t.Fatalf("DeleteObjects: %v, errors for %q", err, r.Keys)
				}
				requireMissing(t, ctx, store, bucket, "gone-1")
				requireMissing(t, ctx, store, bucket, "gone-2")
			})

			t.Run("create-bucket-object-lock", func(t *testing.T) {
				locked := bucket + "-lock"
				if _, err := client.run(t, "create-bucket", locked, "true"); err != nil {
					t.Fatalf("CreateBucket with object lock: %v", err)
				}
				out, err := store.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: aws.String(locked)})
				if err != nil || out.ObjectLockConfiguration == nil ||
					out.ObjectLockConfiguration.ObjectLockEnabled != types.ObjectLockEnabledEnabled {
					t.Fatalf("the store's bucket %s has no object lock: %+v %v", locked, out, err)
				}
			})

			t.Run("copy-special-names", func(t *testing.T) {
				for j, key := range []string{"?not-question", "a?b", "dir/x?versionId", " ", "_", "__"} {
					body := []byte(fmt.Sprintf("source %d", j))
					putBytes(t, ctx, store, bucket, key, body)
					dest := fmt.Sprintf("copy-%d", j)
					if err := client.Copy(t, bucket, key, dest); err != nil {
						t.Errorf("copy of %q: %v", key, err)
						continue
					}
					if got := getBytes(t, ctx, store, bucket, dest); string(got) != string(body) {
						t.Errorf("copy of %q holds %q, want %q", key, got, body)
					}
				}
			})
		})
	}
}

// TestBoto3sCopyOfAVersionLikeKeyIsRefused: the one copy source key S3
// takes and s3cond refuses (docs/security.md), from either boto3, with 400
// InvalidArgument and nothing copied.
func TestBoto3sCopyOfAVersionLikeKeyIsRefused(t *testing.T) {
	e := NewEnv(t)
	e.RequireProxy(t)
	store := e.BackendClient()
	for i, flavour := range boto3Flavours {
		t.Run(flavour.name, func(t *testing.T) {
			client := newBoto3Flavour(t, e, flavour.program)
			bucket := fmt.Sprintf("boto3r-%d", i)
			CreateBucket(t, store, bucket)
			putBytes(t, t.Context(), store, bucket, "k", []byte("k"))
			// A key holding "?versionId=" reads as another key on a store
			// that decodes the copy source before cutting (versitygw).
			err := client.Copy(t, bucket, "k?versionId=x", "dest")
			var s3Err *clientS3Error
			if !errors.As(err, &s3Err) || s3Err.Status != 400 || s3Err.Code != "InvalidArgument" {
				t.Fatalf("copy of k?versionId=x: %v, want 400 InvalidArgument", err)
			}
			requireMissing(t, t.Context(), store, bucket, "dest")
		})
	}
}

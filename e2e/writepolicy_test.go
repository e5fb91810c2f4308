package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestWritePolicies runs the write policies (configured by their S3COND_*
// variables) with the AWS CLI, on versitygw and on s3rver (a store with no
// conditional writes at all): a legacy tool (`aws s3 cp`, which cannot send
// If-None-Match) never overwrites on a create_only bucket, single-part or
// multipart; a bucket that requires conditional writes or deletes refuses
// the unconditional ones with the policy's 403 and takes the conditional.
func TestWritePolicies(t *testing.T) {
	for _, backend := range []BackendKind{BackendVersityGW, BackendS3rver} {
		t.Run(string(backend), func(t *testing.T) {
			if TargetMode() == ModeDirect {
				t.Skip("the write policies are s3cond's; no store has them")
			}
			e := NewEnv(t, WithBackend(backend), WithProcessEnv(
				"S3COND_CREATE_ONLY=legacy-*",
				"S3COND_REQUIRE_CONDITIONAL_WRITES=ledger-*",
				"S3COND_REQUIRE_CONDITIONAL_DELETES=ledger-*",
			))
			c := e.Client(t, e.RW)
			CreateBucket(t, c, "legacy-archive")
			CreateBucket(t, c, "ledger-tables")
			t.Run("create_only", func(t *testing.T) { testCreateOnlyWithLegacyTool(t, e, c) })
			t.Run("require_conditional_writes", func(t *testing.T) { testRequiredConditionalWrites(t, e, c) })
			t.Run("require_conditional_deletes", func(t *testing.T) { testRequiredConditionalDeletes(t, e, c) })
		})
	}
}

// awsCLI runs the AWS CLI against s3cond and returns its stderr and error.
func awsCLI(t *testing.T, e *Env, args ...string) (string, error) {
	t.Helper()
	_, stderr, err := runClientResult(t, e.RW, t.TempDir(), "aws", append([]string{"--endpoint-url", e.Endpoint}, args...)...)
	return stderr, err
}

func requireCLIError(t *testing.T, what, stderr string, err error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s succeeded; want it refused (%v)", what, wants)
	}
	for _, want := range wants {
		if !strings.Contains(stderr, want) {
			t.Fatalf("%s: stderr %q does not say %q", what, stderr, want)
		}
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func testCreateOnlyWithLegacyTool(t *testing.T, e *Env, c *s3.Client) {
	ctx := t.Context()
	dir := t.TempDir()
	for _, size := range []int64{1 << 10, 9 << 20} { // aws s3 cp goes multipart above 8 MiB
		first, second := writePatternFile(t, dir, 3601, size), writePatternFile(t, dir, 3602, size)
		key := "report-" + first.path[len(dir)+1:]
		url := "s3://legacy-archive/" + key
		if stderr, err := awsCLI(t, e, "s3", "cp", "--only-show-errors", first.path, url); err != nil {
			t.Fatalf("first aws s3 cp of %d bytes: %v\n%s", size, err, stderr)
		}
		stderr, err := awsCLI(t, e, "s3", "cp", "--only-show-errors", second.path, url)
		requireCLIError(t, "second aws s3 cp over the same key", stderr, err, "PreconditionFailed")
		if got := sha256Hex(getBytes(t, ctx, c, "legacy-archive", key)); got != first.sha256 {
			t.Fatalf("%d-byte object changed after the refused overwrite: sha256 %s, want %s", size, got, first.sha256)
		}
	}
	// An explicit compare-and-swap is allowed: the point is no blind overwrite.
	made := putBytes(t, ctx, c, "legacy-archive", "cas", []byte("v1"))
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("legacy-archive"), Key: aws.String("cas"),
		Body: bytes.NewReader([]byte("v2")), IfMatch: made.ETag}); err != nil {
		t.Fatalf("PutObject with If-Match on a create_only bucket: %v", err)
	}
	if got := getBytes(t, ctx, c, "legacy-archive", "cas"); string(got) != "v2" {
		t.Fatalf("cas holds %q after the compare-and-swap", got)
	}
}

func testRequiredConditionalWrites(t *testing.T, e *Env, c *s3.Client) {
	ctx := t.Context()
	path := t.TempDir() + "/commit.json"
	writeFile(t, path, `{"version":1}`)
	stderr, err := awsCLI(t, e, "s3api", "put-object", "--bucket", "ledger-tables", "--key", "_log/1.json", "--body", path)
	requireCLIError(t, "unconditional put-object", stderr, err, "AccessDenied", "only conditional writes")
	requireMissing(t, ctx, c, "ledger-tables", "_log/1.json")
	if stderr, err := awsCLI(t, e, "s3api", "put-object", "--bucket", "ledger-tables", "--key", "_log/1.json", "--body", path,
		"--if-none-match", "*"); err != nil {
		t.Fatalf("put-object --if-none-match '*': %v\n%s", err, stderr)
	}
	stderr, err = awsCLI(t, e, "s3api", "put-object", "--bucket", "ledger-tables", "--key", "_log/1.json", "--body", path,
		"--if-none-match", "*")
	requireCLIError(t, "a second create of the same version", stderr, err, "PreconditionFailed")
	_, err = c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("ledger-tables"), Key: aws.String("_log/2.json"),
		CopySource: aws.String("ledger-tables/_log/1.json")})
	RequireS3Error(t, err, 403, "AccessDenied")
	requireMissing(t, ctx, c, "ledger-tables", "_log/2.json")
}

func testRequiredConditionalDeletes(t *testing.T, e *Env, c *s3.Client) {
	ctx := t.Context()
	first := putIfAbsent(t, c, "ledger-tables", "lock", "held")
	stderr, err := awsCLI(t, e, "s3api", "delete-object", "--bucket", "ledger-tables", "--key", "lock")
	requireCLIError(t, "unconditional delete-object", stderr, err, "AccessDenied", "only conditional deletes")
	if got := getBytes(t, ctx, c, "ledger-tables", "lock"); string(got) != "held" {
		t.Fatalf("lock holds %q after the refused delete", got)
	}
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("ledger-tables"), Key: aws.String("lock"), IfMatch: first}); err != nil {
		t.Fatalf("DeleteObject with If-Match: %v", err)
	}
	requireMissing(t, ctx, c, "ledger-tables", "lock")

	a := putIfAbsent(t, c, "ledger-tables", "a", "a")
	putIfAbsent(t, c, "ledger-tables", "b", "b")
	out, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("ledger-tables"), Delete: &types.Delete{Objects: []types.ObjectIdentifier{
		{Key: aws.String("a"), ETag: a}, {Key: aws.String("b")},
	}}})
	if err != nil {
		t.Fatalf("DeleteObjects: %v", err)
	}
	if len(out.Deleted) != 1 || aws.ToString(out.Deleted[0].Key) != "a" || len(out.Errors) != 1 ||
		aws.ToString(out.Errors[0].Key) != "b" || aws.ToString(out.Errors[0].Code) != "AccessDenied" {
		t.Fatalf("DeleteObjects: deleted %d, errors %+v; want a deleted and b refused AccessDenied", len(out.Deleted), out.Errors)
	}
	requireMissing(t, ctx, c, "ledger-tables", "a")
	if got := getBytes(t, ctx, c, "ledger-tables", "b"); string(got) != "b" {
		t.Fatalf("b holds %q after its refused delete", got)
	}
}

// putIfAbsent creates key on a bucket that takes only conditional writes.
func putIfAbsent(t *testing.T, c *s3.Client, bucket, key, body string) *string {
	t.Helper()
	out, err := c.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key),
		Body: strings.NewReader(body), IfNoneMatch: aws.String("*")})
	if err != nil {
		t.Fatalf("create %s/%s: %v", bucket, key, err)
	}
	return out.ETag
}

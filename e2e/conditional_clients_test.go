package e2e

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestConditionalSDK drives the conditional operations through
// aws-sdk-go-v2's IfMatch / IfNoneMatch fields and DeleteObjects' per-key ETag.
func TestConditionalSDK(t *testing.T) {
	leaseStores(t, func(t *testing.T, e *Env) {
		ctx := t.Context()
		c := e.Client(t, e.RW)
		CreateBucket(t, c, "sdk")
		put := func(key, body string, ifMatch, ifNoneMatch *string) (*s3.PutObjectOutput, error) {
			return c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("sdk"), Key: aws.String(key),
				Body: strings.NewReader(body), IfMatch: ifMatch, IfNoneMatch: ifNoneMatch})
		}

		first, err := put("k", "v1", nil, aws.String("*"))
		if err != nil {
			t.Fatalf("create with If-None-Match *: %v", err)
		}
		_, err = put("k", "v1 again", nil, aws.String("*"))
		RequireS3Error(t, err, 412, "PreconditionFailed")
		second, err := put("k", "v2", first.ETag, nil)
		if err != nil {
			t.Fatalf("replace with If-Match: %v", err)
		}
		_, err = put("k", "stale", first.ETag, nil)
		RequireS3Error(t, err, 412, "PreconditionFailed")
		_, err = put("missing", "x", first.ETag, nil)
		RequireS3Error(t, err, 404, "NoSuchKey")
		if got := getBytes(t, ctx, c, "sdk", "k"); string(got) != "v2" {
			t.Fatalf("k holds %q, want v2", got)
		}

		if e.Mode != ModeDirect { // versitygw has no conditional CopyObject
			_, err = c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("sdk"), Key: aws.String("k"),
				CopySource: aws.String("sdk/k"), IfNoneMatch: aws.String("*"), MetadataDirective: types.MetadataDirectiveReplace})
			RequireS3Error(t, err, 412, "PreconditionFailed")
			if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("sdk"), Key: aws.String("copy"),
				CopySource: aws.String("sdk/k"), IfNoneMatch: aws.String("*")}); err != nil {
				t.Fatalf("copy to a new key with If-None-Match *: %v", err)
			}
			_, err = c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("sdk"), Key: aws.String("copy"),
				CopySource: aws.String("sdk/k"), IfMatch: first.ETag, MetadataDirective: types.MetadataDirectiveReplace})
			RequireS3Error(t, err, 412, "PreconditionFailed")
		}

		complete := func(key string, ifMatch, ifNoneMatch *string) (*s3.CompleteMultipartUploadOutput, error) {
			created, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("sdk"), Key: aws.String(key)})
			if err != nil {
				t.Fatalf("create multipart upload: %v", err)
			}
			part, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("sdk"), Key: aws.String(key), UploadId: created.UploadId,
				PartNumber: aws.Int32(1), Body: bytes.NewReader([]byte("multipart " + key))})
			if err != nil {
				t.Fatalf("upload part: %v", err)
			}
			out, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("sdk"), Key: aws.String(key),
				UploadId: created.UploadId, IfMatch: ifMatch, IfNoneMatch: ifNoneMatch,
				MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: part.ETag, PartNumber: aws.Int32(1)}}}})
			if err != nil {
				_, _ = c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String("sdk"), Key: aws.String(key), UploadId: created.UploadId})
			}
			return out, err
		}
		_, err = complete("k", nil, aws.String("*"))
		RequireS3Error(t, err, 412, "PreconditionFailed")
		mpu, err := complete("k", second.ETag, nil)
		if err != nil {
			t.Fatalf("complete with If-Match: %v", err)
		}
		if got := getBytes(t, ctx, c, "sdk", "k"); string(got) != "multipart k" {
			t.Fatalf("k holds %q after the conditional completion", got)
		}

		_, err = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("sdk"), Key: aws.String("k"), IfMatch: second.ETag})
		RequireS3Error(t, err, 412, "PreconditionFailed")
		if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("sdk"), Key: aws.String("k"), IfMatch: mpu.ETag}); err != nil {
			t.Fatalf("delete with the multipart ETag: %v", err)
		}
		requireMissing(t, ctx, c, "sdk", "k")

		if e.Mode == ModeDirect {
			return // versitygw ignores DeleteObjects' per-key ETag
		}
		a := putBytes(t, ctx, c, "sdk", "batch/a", []byte("a"))
		putBytes(t, ctx, c, "sdk", "batch/b", []byte("b"))
		putBytes(t, ctx, c, "sdk", "batch/c", []byte("c"))
		out, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("sdk"), Delete: &types.Delete{Objects: []types.ObjectIdentifier{
			{Key: aws.String("batch/a"), ETag: a.ETag},
			{Key: aws.String("batch/b"), ETag: aws.String(otherETag)},
			{Key: aws.String("batch/c")},
		}}})
		if err != nil {
			t.Fatalf("delete objects with ETags: %v", err)
		}
		var deleted, failed []string
		for _, d := range out.Deleted {
			deleted = append(deleted, aws.ToString(d.Key))
		}
		for _, f := range out.Errors {
			failed = append(failed, aws.ToString(f.Key)+":"+aws.ToString(f.Code))
		}
		slices.Sort(deleted) // S3 does not promise the request's order
		if fmt.Sprint(deleted) != "[batch/a batch/c]" || fmt.Sprint(failed) != "[batch/b:PreconditionFailed]" {
			t.Fatalf("delete objects: deleted %v, errors %v; want [batch/a batch/c] and [batch/b:PreconditionFailed]", deleted, failed)
		}
		requireMissing(t, ctx, c, "sdk", "batch/a")
		if got := getBytes(t, ctx, c, "sdk", "batch/b"); string(got) != "b" {
			t.Fatalf("batch/b holds %q after its failed conditional delete", got)
		}
	})
}

// TestConditionalAWSCLI drives the conditional options of the AWS CLI.
func TestConditionalAWSCLI(t *testing.T) {
	leaseStores(t, func(t *testing.T, e *Env) {
		ctx := t.Context()
		c := e.Client(t, e.RW)
		CreateBucket(t, c, "cli")
		dir := t.TempDir()
		body := dir + "/body.txt"
		writeFile(t, body, "from the cli")
		aws3 := func(args ...string) (string, string, error) {
			return runClientResult(t, e.RW, dir, "aws", append([]string{"--endpoint-url", e.Endpoint, "s3api"}, args...)...)
		}
		requireCLIError := func(code string, args ...string) {
			t.Helper()
			stdout, stderr, err := aws3(args...)
			if err == nil || !strings.Contains(stderr, code) {
				t.Fatalf("aws s3api %s: want %s, got err %v\nstdout %s\nstderr %s", strings.Join(args, " "), code, err, stdout, stderr)
			}
		}

		if _, stderr, err := aws3("put-object", "--bucket", "cli", "--key", "k", "--body", body, "--if-none-match", "*"); err != nil {
			t.Fatalf("put-object --if-none-match '*': %v %s", err, stderr)
		}
		requireCLIError("PreconditionFailed", "put-object", "--bucket", "cli", "--key", "k", "--body", body, "--if-none-match", "*")
		head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("cli"), Key: aws.String("k")})
		if err != nil {
			t.Fatal(err)
		}
		if _, stderr, err := aws3("put-object", "--bucket", "cli", "--key", "k", "--body", body, "--if-match", aws.ToString(head.ETag)); err != nil {
			t.Fatalf("put-object --if-match: %v %s", err, stderr)
		}
		requireCLIError("PreconditionFailed", "put-object", "--bucket", "cli", "--key", "k", "--body", body, "--if-match", otherETag)
		requireCLIError("NoSuchKey", "put-object", "--bucket", "cli", "--key", "missing", "--body", body, "--if-match", otherETag)
		if e.Mode != ModeDirect { // versitygw has no conditional CopyObject
			requireCLIError("PreconditionFailed", "copy-object", "--bucket", "cli", "--key", "k", "--copy-source", "cli/k",
				"--metadata-directive", "REPLACE", "--if-none-match", "*")
		}

		created, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("cli"), Key: aws.String("k")})
		if err != nil {
			t.Fatal(err)
		}
		part, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("cli"), Key: aws.String("k"), UploadId: created.UploadId,
			PartNumber: aws.Int32(1), Body: strings.NewReader("part")})
		if err != nil {
			t.Fatal(err)
		}
		parts := fmt.Sprintf(`{"Parts":[{"ETag":%q,"PartNumber":1}]}`, aws.ToString(part.ETag))
		requireCLIError("PreconditionFailed", "complete-multipart-upload", "--bucket", "cli", "--key", "k",
			"--upload-id", aws.ToString(created.UploadId), "--multipart-upload", parts, "--if-none-match", "*")
		if _, stderr, err := aws3("complete-multipart-upload", "--bucket", "cli", "--key", "k",
			"--upload-id", aws.ToString(created.UploadId), "--multipart-upload", parts, "--if-match", "*"); err != nil && e.Mode != ModeDirect {
			t.Fatalf("complete-multipart-upload --if-match '*': %v %s", err, stderr)
		}

		requireCLIError("PreconditionFailed", "delete-object", "--bucket", "cli", "--key", "k", "--if-match", otherETag)
		if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("cli"), Key: aws.String("k")}); err != nil {
			t.Fatalf("k is gone after a failed conditional delete: %v", err)
		}
	})
}

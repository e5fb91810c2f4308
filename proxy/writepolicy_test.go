package proxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// onlyTestBucket is a write policy rule naming the fixture's bucket.
func onlyTestBucket(bucket string) bool { return bucket == bucketName }

// requirePolicyRefusal checks that err is the write policy's 403, not
// another AccessDenied (a key's grant, the store's own).
func requirePolicyRefusal(t *testing.T, what string, err error, message string) {
	t.Helper()
	var api smithy.APIError
	if !errors.As(err, &api) || api.ErrorCode() != "AccessDenied" || !strings.Contains(api.ErrorMessage(), message) {
		t.Fatalf("%s: %v; want the write policy's AccessDenied (%q)", what, err, message)
	}
}

// completeUpload runs CreateMultipartUpload and UploadPart (exempt from the
// write policies, as on S3) and returns the completion's error.
func (f *fixture) completeUpload(t *testing.T, key, body string, mod func(*s3.CompleteMultipartUploadInput)) error {
	t.Helper()
	ctx := context.Background()
	created, err := f.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucketName), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("CreateMultipartUpload: %v", err)
	}
	part, err := f.client.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucketName), Key: aws.String(key),
		UploadId: created.UploadId, PartNumber: aws.Int32(1), Body: strings.NewReader(body)})
	if err != nil {
		t.Fatalf("UploadPart: %v", err)
	}
	in := &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucketName), Key: aws.String(key), UploadId: created.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: part.ETag, PartNumber: aws.Int32(1)}}}}
	if mod != nil {
		mod(in)
	}
	_, err = f.client.CompleteMultipartUpload(ctx, in)
	return err
}

func (f *fixture) copyObject(key, source string, mod func(*s3.CopyObjectInput)) error {
	in := &s3.CopyObjectInput{Bucket: aws.String(bucketName), Key: aws.String(key), CopySource: aws.String(bucketName + "/" + source)}
	if mod != nil {
		mod(in)
	}
	_, err := f.client.CopyObject(context.Background(), in)
	return err
}

func (f *fixture) requireBody(t *testing.T, key, want string) {
	t.Helper()
	if got, err := f.get(t, key); err != nil || got != want {
		t.Fatalf("%s holds %q (%v), want %q", key, got, err, want)
	}
}

// TestRequireConditionalWritesRefusesUnconditionalWrites: on a bucket of
// require_conditional_writes, every write that could replace an object must
// say what it expects, as under S3's s3:if-none-match / s3:if-match policy;
// the refused ones never reach the store.
func TestRequireConditionalWritesRefusesUnconditionalWrites(t *testing.T) {
	for _, native := range []bool{false, true} {
		t.Run(fmt.Sprintf("native=%v", native), func(t *testing.T) {
			var storeWrites atomic.Int32
			f := newFixtureWith(t, fixtureOptions{native: native,
				writePolicy: WritePolicy{RequireConditionalWrites: onlyTestBucket},
				backendHook: func(r *http.Request) {
					if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/refused") {
						storeWrites.Add(1)
					}
				}})
			const message = "only conditional writes"
			_, err := f.put(t, "refused", "v", nil)
			requirePolicyRefusal(t, "unconditional PutObject", err, message)
			first, err := f.put(t, "k", "v1", func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") })
			if err != nil {
				t.Fatalf("PutObject with If-None-Match: %v", err)
			}
			second, err := f.put(t, "k", "v2", func(in *s3.PutObjectInput) { in.IfMatch = first.ETag })
			if err != nil {
				t.Fatalf("PutObject with If-Match: %v", err)
			}
			requirePolicyRefusal(t, "unconditional CopyObject", f.copyObject("refused", "k", nil), message)
			requirePolicyRefusal(t, "unconditional CompleteMultipartUpload", f.completeUpload(t, "refused", "part", nil), message)
			f.expectMissing(t, "refused")
			if n := storeWrites.Load(); n != 1 { // the UploadPart alone
				t.Fatalf("the store saw %d PUTs on the refused key, want only the exempt UploadPart", n)
			}
			if !native { // gofakes3 has no conditional CopyObject or completion of its own
				if err := f.copyObject("copy", "k", func(in *s3.CopyObjectInput) { in.IfNoneMatch = aws.String("*") }); err != nil {
					t.Fatalf("CopyObject with If-None-Match: %v", err)
				}
				if err := f.completeUpload(t, "k", "multipart", func(in *s3.CompleteMultipartUploadInput) { in.IfMatch = second.ETag }); err != nil {
					t.Fatalf("CompleteMultipartUpload with If-Match: %v", err)
				}
				f.requireBody(t, "k", "multipart")
			}
		})
	}
}

// TestCreateOnlyTakesUnconditionalWritesAsCreates: on a create_only bucket
// a write without a condition creates or fails with 412, through the leased
// path and, on a store that checks conditions itself, by sending it the
// If-None-Match: * the client did not.
func TestCreateOnlyTakesUnconditionalWritesAsCreates(t *testing.T) {
	for _, native := range []bool{false, true} {
		t.Run(fmt.Sprintf("native=%v", native), func(t *testing.T) {
			var storeCreates atomic.Int32
			f := newFixtureWith(t, fixtureOptions{native: native,
				writePolicy: WritePolicy{CreateOnly: onlyTestBucket},
				backendHook: func(r *http.Request) {
					if r.Method == http.MethodPut && r.Header.Get("If-None-Match") == "*" {
						storeCreates.Add(1)
					}
				}})
			first, err := f.put(t, "k", "first", nil)
			if err != nil {
				t.Fatalf("first unconditional PutObject: %v", err)
			}
			if _, err := f.put(t, "k", "overwrite", nil); errorCode(err) != "PreconditionFailed" {
				t.Fatalf("second unconditional PutObject: %v, want PreconditionFailed", err)
			}
			f.requireBody(t, "k", "first")
			if native && storeCreates.Load() == 0 {
				t.Fatal("the native store was never sent If-None-Match: *")
			}
			// An explicit compare-and-swap is no blind overwrite: it goes on.
			if _, err := f.put(t, "k", "swapped", func(in *s3.PutObjectInput) { in.IfMatch = first.ETag }); err != nil {
				t.Fatalf("PutObject with If-Match: %v", err)
			}
			f.requireBody(t, "k", "swapped")
			if native {
				return // gofakes3 has no conditional CopyObject or completion of its own
			}
			if err := f.copyObject("k", "k", func(in *s3.CopyObjectInput) { in.MetadataDirective = types.MetadataDirectiveReplace }); errorCode(err) != "PreconditionFailed" {
				t.Fatalf("unconditional CopyObject onto an existing key: %v, want PreconditionFailed", err)
			}
			if err := f.completeUpload(t, "k", "multipart", nil); errorCode(err) != "PreconditionFailed" {
				t.Fatalf("unconditional CompleteMultipartUpload onto an existing key: %v, want PreconditionFailed", err)
			}
			f.requireBody(t, "k", "swapped")
			if err := f.copyObject("copy", "k", nil); err != nil {
				t.Fatalf("unconditional CopyObject to a new key: %v", err)
			}
			if err := f.completeUpload(t, "new", "multipart", nil); err != nil {
				t.Fatalf("unconditional CompleteMultipartUpload of a new key: %v", err)
			}
			f.requireBody(t, "new", "multipart")
		})
	}
}

// TestPostObjectUnderWritePolicies: a POST form has no condition fields, so
// a bucket that requires conditional writes refuses every one, and a
// create_only bucket takes it as a create.
func TestPostObjectUnderWritePolicies(t *testing.T) {
	post := func(t *testing.T, f *fixture, body string) *http.Response {
		fields := append(uploadPolicy().fields(t), field{"key", "uploads/p"})
		return sendPostForm(t, f.proxyURL, bucketName, fields, "f", strings.NewReader(body), int64(len(body)))
	}
	t.Run("require_conditional_writes", func(t *testing.T) {
		f := newFixtureWith(t, fixtureOptions{writePolicy: WritePolicy{RequireConditionalWrites: onlyTestBucket}})
		expectS3Error(t, post(t, f, "form"), http.StatusForbidden, "AccessDenied")
		f.expectMissing(t, "uploads/p")
	})
	t.Run("create_only", func(t *testing.T) {
		f := newFixtureWith(t, fixtureOptions{writePolicy: WritePolicy{CreateOnly: onlyTestBucket}})
		if resp := post(t, f, "first"); resp.StatusCode != http.StatusNoContent {
			t.Fatalf("first POST: status %d", resp.StatusCode)
		}
		expectS3Error(t, post(t, f, "second"), http.StatusPreconditionFailed, "PreconditionFailed")
		f.requireBody(t, "uploads/p", "first")
	})
}

// TestRequireConditionalDeletes: DeleteObject needs If-Match (a size or
// time condition alone is not enough, as S3's s3:if-match policy asks for
// the header), and DeleteObjects refuses each entry without an ETag while
// the others go on, as S3 reports a key its policy denies.
func TestRequireConditionalDeletes(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{writePolicy: WritePolicy{RequireConditionalDeletes: onlyTestBucket}})
	ctx := context.Background()
	out, err := f.put(t, "d", "four", nil)
	if err != nil {
		t.Fatal(err)
	}
	del := func(in *s3.DeleteObjectInput) error {
		in.Bucket, in.Key = aws.String(bucketName), aws.String("d")
		_, err := f.client.DeleteObject(ctx, in)
		return err
	}
	const message = "only conditional deletes"
	requirePolicyRefusal(t, "unconditional DeleteObject", del(&s3.DeleteObjectInput{}), message)
	requirePolicyRefusal(t, "DeleteObject with a size alone", del(&s3.DeleteObjectInput{IfMatchSize: aws.Int64(4)}), message)
	f.requireBody(t, "d", "four")
	if err := del(&s3.DeleteObjectInput{IfMatch: out.ETag}); err != nil {
		t.Fatalf("DeleteObject with If-Match: %v", err)
	}
	f.expectMissing(t, "d")

	a, _ := f.put(t, "a", "a", nil)
	if _, err := f.put(t, "b", "b", nil); err != nil {
		t.Fatal(err)
	}
	result, err := f.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucketName), Delete: &types.Delete{Objects: []types.ObjectIdentifier{
		{Key: aws.String("a"), ETag: a.ETag}, {Key: aws.String("b")},
	}}})
	if err != nil {
		t.Fatalf("DeleteObjects: %v", err)
	}
	var deleted, failed []string
	for _, d := range result.Deleted {
		deleted = append(deleted, aws.ToString(d.Key))
	}
	for _, e := range result.Errors {
		failed = append(failed, aws.ToString(e.Key)+":"+aws.ToString(e.Code)+":"+aws.ToString(e.Message))
	}
	if !slices.Equal(deleted, []string{"a"}) || len(failed) != 1 || !strings.HasPrefix(failed[0], "b:AccessDenied:") || !strings.Contains(failed[0], message) {
		t.Fatalf("DeleteObjects: deleted %v, errors %v; want a deleted and b refused by the policy", deleted, failed)
	}
	f.expectMissing(t, "a")
	f.requireBody(t, "b", "b")
}

// TestCreateOnlyRacingLegacyWritersHaveOneWinner: unconditional writers that
// race on a free key of a create_only bucket go through the lease as
// If-None-Match: * does, so exactly one body is stored and the rest are told
// so (gofakes3, the store here, would let every one of them overwrite).
func TestCreateOnlyRacingLegacyWritersHaveOneWinner(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{writePolicy: WritePolicy{CreateOnly: onlyTestBucket}})
	f.requireBody(t, "race", requireOneWinner(t, f, 8, nil))
}

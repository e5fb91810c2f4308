package e2e

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestRenameSourceOnAPlainPutIsNotImplemented: issue 33 finding 1. Eight
// clients "appending" at one offset (PutObject x-amz-write-offset-bytes,
// S3's append) were forwarded to versitygw, which ignores the header: all
// eight got 200 and the object was replaced eight times. Through s3cond
// each got S3's 501 NotImplemented naming the header; appends are now
// implemented (append_test.go: TestAppendRaces). A plain PutObject carrying
// RenameObject's x-amz-rename-source (no ?renameObject) is 501 the same
// way; RenameObject itself is implemented (rename_test.go).
func TestRenameSourceOnAPlainPutIsNotImplemented(t *testing.T) {
	e := NewEnv(t)
	e.RequireProxy(t)
	ctx := t.Context()
	rw := e.Client(t, e.RW)
	CreateBucket(t, rw, "append")
	seed := []byte("the object before any rename")
	putBytes(t, ctx, rw, "append", "log", seed)

	Do(t, e.Endpoint, e.RW, RawRequest{Method: http.MethodPut, Path: "/append/renamed",
		Header: http.Header{"X-Amz-Rename-Source": {"/append/log"}}}).RequireError(t, http.StatusNotImplemented, "NotImplemented")
	requireMissing(t, ctx, e.BackendClient(), "append", "renamed")
	if got := getBytes(t, ctx, e.BackendClient(), "append", "log"); !bytes.Equal(got, seed) {
		t.Fatalf("after refused renames the store holds %q, want %q", got, seed)
	}
}

// TestObjectLockIsForwardedOnlyWhereKept: the object-lock headers reach a
// store the start-up check found to keep a legal hold (versitygw: a held
// object cannot be deleted through s3cond), and are answered 501 where the
// store would ignore them (s3rver keeps no hold: the delete would succeed).
// A Complete's x-amz-mp-object-size likewise: refused for a wrong size by
// versitygw, 501 on s3rver, which would complete the upload regardless.
func TestObjectLockIsForwardedOnlyWhereKept(t *testing.T) {
	for _, backend := range []BackendKind{BackendVersityGW, BackendS3rver} {
		t.Run(string(backend), func(t *testing.T) {
			e := NewEnv(t, WithBackend(backend))
			e.RequireProxy(t)
			ctx := t.Context()
			rw := e.Client(t, e.RW)
			_, err := rw.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("locked"), ObjectLockEnabledForBucket: aws.Bool(true)})
			completeErr := completeWithWrongSize(t, e)
			if backend == BackendS3rver {
				if HTTPStatus(err) != http.StatusNotImplemented || ErrorCode(err) != "NotImplemented" {
					t.Fatalf("CreateBucket with object lock on a store without it: %v, want 501 NotImplemented", err)
				}
				if HTTPStatus(completeErr) != http.StatusNotImplemented {
					t.Fatalf("Complete with x-amz-mp-object-size on a store that ignores it: %v, want 501", completeErr)
				}
				return
			}
			if status := HTTPStatus(completeErr); status == 0 || status == http.StatusNotImplemented {
				t.Fatalf("Complete with a wrong x-amz-mp-object-size on versitygw: %v, want the store's refusal", completeErr)
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := rw.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("locked"), Key: aws.String("held"),
				Body: bytes.NewReader([]byte("held")), ObjectLockLegalHoldStatus: types.ObjectLockLegalHoldStatusOn}); err != nil {
				t.Fatalf("PutObject under a legal hold: %v", err)
			}
			if _, err := rw.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("locked"), Key: aws.String("held")}); HTTPStatus(err) != http.StatusForbidden {
				t.Fatalf("delete of a held object: %v, want 403", err)
			}
		})
	}
}

// completeWithWrongSize completes a one-part upload through s3cond naming
// a wrong x-amz-mp-object-size, and returns the answer's error.
func completeWithWrongSize(t *testing.T, e *Env) error {
	t.Helper()
	ctx := t.Context()
	rw := e.Client(t, e.RW)
	CreateBucket(t, rw, "sized")
	key := aws.String("sized")
	created, err := rw.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("sized"), Key: key})
	if err != nil {
		t.Fatal(err)
	}
	part := []byte("the one part")
	up, err := rw.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("sized"), Key: key, UploadId: created.UploadId,
		PartNumber: aws.Int32(1), Body: bytes.NewReader(part)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = rw.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("sized"), Key: key,
		UploadId: created.UploadId, MpuObjectSize: aws.Int64(int64(len(part)) + 1),
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: up.ETag, PartNumber: aws.Int32(1)}}}})
	return err
}

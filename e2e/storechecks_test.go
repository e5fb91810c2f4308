package e2e

import (
	"bytes"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3cond/s3cond/internal/testservers"
)

// TestAutoLeaseSendsVersityGWTheConditionsItChecks: with conditional: auto
// on versitygw v1.8.0, which checks PutObject's and
// CompleteMultipartUpload's conditions right but ignores CopyObject's,
// s3cond leases every conditional write and still sends the store the
// conditions it checks (so a late write fails there), and not the others.
func TestAutoLeaseSendsVersityGWTheConditionsItChecks(t *testing.T) {
	v := testservers.StartVersityGW(t)
	cred := Credentials{v.AccessKey, v.Secret}
	CreateBucket(t, NewS3Client(v.Endpoint, cred, nil), probeBucket)
	tap := NewStoreTap(t, v.Endpoint)
	s := testservers.StartS3cond(t, autoConfig(tap.URL, cred, "auto", probeBucket))
	requireLogged(t, s, "conditional writes: lease", "PutObject If-None-Match", "CompleteMultipartUpload If-Match")
	c := NewS3Client(s.Endpoint, Credentials{"client", "client-secret"}, nil)
	ctx := t.Context()
	CreateBucket(t, c, "checks")

	put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("checks"), Key: aws.String("put"),
		Body: bytes.NewReader([]byte("v1")), IfNoneMatch: aws.String("*")})
	if err != nil {
		t.Fatalf("conditional create: %v", err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("checks"), Key: aws.String("put"),
		Body: bytes.NewReader([]byte("v2")), IfMatch: put.ETag}); err != nil {
		t.Fatalf("CAS: %v", err)
	}
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("checks"), Key: aws.String("copy"),
		CopySource: aws.String("checks/put"), IfNoneMatch: aws.String("*")}); err != nil {
		t.Fatalf("conditional copy: %v", err)
	}
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("checks"), Key: aws.String("mp")})
	if err != nil {
		t.Fatal(err)
	}
	part, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("checks"), Key: aws.String("mp"), UploadId: up.UploadId,
		PartNumber: aws.Int32(1), Body: bytes.NewReader([]byte("part"))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("checks"), Key: aws.String("mp"),
		UploadId: up.UploadId, IfNoneMatch: aws.String("*"),
		MultipartUpload: &s3types.CompletedMultipartUpload{Parts: []s3types.CompletedPart{{PartNumber: aws.Int32(1), ETag: part.ETag}}}}); err != nil {
		t.Fatalf("conditional complete: %v", err)
	}

	var creates, cas, copies, completes int
	for _, w := range tap.Writes.All() {
		switch {
		case w.Path == "/checks/put" && w.IfNoneMatch == "*":
			creates++
		case w.Path == "/checks/put" && w.IfMatch == aws.ToString(put.ETag):
			cas++
		case w.Path == "/checks/copy" && w.Copy:
			copies++
			if w.IfNoneMatch != "" || w.IfMatch != "" {
				t.Errorf("the copy went to the store with If-None-Match %q, If-Match %q; versitygw ignores them, so none are sent", w.IfNoneMatch, w.IfMatch)
			}
		case w.Path == "/checks/mp" && w.Method == "POST" && w.IfNoneMatch == "*":
			completes++
		}
	}
	if creates != 1 || cas != 1 || copies != 1 || completes != 1 {
		t.Fatalf("the store saw %d creates with If-None-Match: *, %d CAS with If-Match, %d copies, %d completions with If-None-Match: *; want 1 each\n%+v",
			creates, cas, copies, completes, tap.Writes.All())
	}
}

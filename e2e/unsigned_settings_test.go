package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestUnsignedChecksumSettingsAreRefused: an x-amz-checksum-algorithm added
// unsigned to a presigned CreateMultipartUpload changed the upload's
// algorithm on versitygw, and the client's own signed parts then failed
// (issue 23, item 5). It is a setting, not a check: refused as S3 refuses
// any unsigned x-amz-* header, and no upload is created.
func TestUnsignedChecksumSettingsAreRefused(t *testing.T) {
	e := NewEnv(t)
	e.RequireProxy(t)
	ctx := t.Context()
	rw := e.Client(t, e.RW)
	CreateBucket(t, rw, "unsigned")
	backend := e.BackendClient()

	u, err := PresignURL(e.Endpoint, http.MethodPost, "/unsigned/k?uploads", e.RW, time.Now(), 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, header := range []string{"X-Amz-Checksum-Algorithm", "X-Amz-Checksum-Type"} {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(header, map[string]string{"X-Amz-Checksum-Algorithm": "SHA1", "X-Amz-Checksum-Type": "FULL_OBJECT"}[header])
		resp, err := Send(req)
		if err != nil {
			t.Fatal(err)
		}
		doc := resp.RequireError(t, 403, "AccessDenied")
		if !strings.Contains(string(resp.Body), "<HeadersNotSigned>"+strings.ToLower(header)+"</HeadersNotSigned>") {
			t.Fatalf("%s: HeadersNotSigned does not name it: %+v %s", header, doc, resp.Body)
		}
	}
	uploads, err := backend.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String("unsigned")})
	if err != nil {
		t.Fatal(err)
	}
	if len(uploads.Uploads) != 0 {
		t.Fatalf("the refused requests created %d uploads on the store", len(uploads.Uploads))
	}

	// The same URL without the added header works, and a signed setting
	// passes.
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if resp, err := Send(req); err != nil || resp.Status != 200 {
		t.Fatalf("the presigned CreateMultipartUpload itself: %v %+v", err, resp)
	}
	if _, err := rw.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("unsigned"), Key: aws.String("signed"),
		ChecksumAlgorithm: types.ChecksumAlgorithmSha256}); err != nil {
		t.Fatalf("CreateMultipartUpload with a signed x-amz-checksum-algorithm: %v", err)
	}
}

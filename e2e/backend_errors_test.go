package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Issue 13, hole 4: a signed request that repeats a signed header
// (then x-amz-meta-a), its first value empty, passes s3cond's verification, but
// versitygw rejects s3cond's re-signed request. Its error document named
// versitygw's access key ID and host:port and carried s3cond's backend
// canonical request and signature, relayed to the client as they were.
// s3cond now refuses a repeated x-amz-meta-* itself (issue 23), so the
// lever is a repeated header no grammar reads.
func TestBackendRejectionShowsTheClientNothingOfTheBackend(t *testing.T) {
	env := NewEnv(t)
	env.RequireProxy(t)
	CreateBucket(t, env.Client(t, env.RW), "backend-errors")

	resp := Do(t, env.Endpoint, env.RW, RawRequest{
		Method: http.MethodPut, Path: "/backend-errors/repeated-meta",
		Header: http.Header{"X-Amz-Extension-A": {"", "second"}},
		Body:   []byte("body"),
	})
	if resp.Status < 400 {
		t.Fatalf("versitygw accepted the re-signed request (%d); the test no longer reproduces a backend rejection", resp.Status)
	}
	body := string(resp.Body)
	backendHost := strings.TrimPrefix(env.Backend.Endpoint, "http://")
	for _, leak := range []string{env.Backend.AccessKey, backendHost, "CanonicalRequest", "StringToSign", "SignatureProvided", "HostId"} {
		if strings.Contains(body, leak) {
			t.Errorf("the client sees %q: %s", leak, body)
		}
	}
	doc := resp.RequireError(t, http.StatusInternalServerError, "InternalError")
	if id := resp.Header.Get("X-Amz-Request-Id"); doc.RequestID != id || id == "" {
		t.Errorf("RequestId %q in the body, %q in x-amz-request-id", doc.RequestID, id)
	}
}

// Issue 15, item 3: CompleteMultipartUpload's Location named versitygw's
// host and port. It names the object as the client addressed it.
func TestCompleteMultipartLocationIsTheClientsURL(t *testing.T) {
	env := NewEnv(t)
	env.RequireProxy(t)
	client := env.Client(t, env.RW)
	CreateBucket(t, client, "located")
	ctx := context.Background()
	created, err := client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("located"), Key: aws.String("dir/obj")})
	if err != nil {
		t.Fatal(err)
	}
	part, err := client.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("located"), Key: aws.String("dir/obj"),
		UploadId: created.UploadId, PartNumber: aws.Int32(1), Body: strings.NewReader("only part")})
	if err != nil {
		t.Fatal(err)
	}
	done, err := client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("located"), Key: aws.String("dir/obj"),
		UploadId: created.UploadId, MultipartUpload: &types.CompletedMultipartUpload{
			Parts: []types.CompletedPart{{ETag: part.ETag, PartNumber: aws.Int32(1)}}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := env.Endpoint + "/located/dir/obj"; aws.ToString(done.Location) != want {
		t.Fatalf("Location %q, want %q", aws.ToString(done.Location), want)
	}
	if aws.ToString(done.Bucket) != "located" {
		t.Fatalf("Bucket %q", aws.ToString(done.Bucket))
	}
}

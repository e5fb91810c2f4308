package embedded

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
)

// A bucket's versioning reads as never enabled: no Status element at all.
func TestBucketVersioningReadsAsNeverEnabled(t *testing.T) {
	ctx, s, c := startStoreWithClient(t)
	putObject(t, ctx, c, "k", []byte("v"))

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, Endpoint+"/dev-bucket?versioning", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "<VersioningConfiguration") || strings.Contains(string(body), "Status") {
		t.Fatalf("%d %s; want 200 and a configuration without a Status", resp.StatusCode, body)
	}
	out, err := c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: devBucket})
	if err != nil || out.Status != "" {
		t.Fatalf("GetBucketVersioning = %+v, %v; want no status", out, err)
	}
}

// `s3cmd mb` asks for a new bucket's location, which creates it (buckets
// are created on first use), and then creates it: that succeeds, as S3 in
// us-east-1 lets its owner create a bucket twice.
func TestCreatingAnExistingBucketSucceeds(t *testing.T) {
	ctx, _, c := startStoreWithClient(t)
	if _, err := c.GetBucketLocation(ctx, &s3.GetBucketLocationInput{Bucket: aws.String("new-bucket")}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("new-bucket")}); err != nil {
			t.Fatalf("create an existing bucket: %v", err)
		}
	}
	// A bucket still has to be empty to be deleted.
	putObject(t, ctx, c, "k", []byte("v"))
	_, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: devBucket})
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "BucketNotEmpty" {
		t.Fatalf("delete a bucket with an object: %v, want BucketNotEmpty", err)
	}
}

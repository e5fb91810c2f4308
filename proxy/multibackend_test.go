package proxy

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

func TestBucketsRouteToTheirBackend(t *testing.T) {
	archive, archiveServer := fakeBackend(t, "archive")
	archive.Buckets = map[string]string{"archive": "archive-2026"}
	f := newFixtureWith(t, fixtureOptions{bucketBackends: map[string]*Backend{"archive": archive}})
	ctx := context.Background()
	if _, err := f.client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("archive")}); err != nil {
		t.Fatal(err)
	}
	_, err := f.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("archive"), Key: aws.String("k"),
		Body: strings.NewReader("kept"), IfNoneMatch: aws.String("*")})
	if err != nil {
		t.Fatalf("conditional create on the second backend: %v", err)
	}
	// The object is on the archive store, under its own bucket name, and not on the default store.
	if got := rawGet(t, archiveServer.URL+"/archive-2026/k"); got != "kept" {
		t.Fatalf("archive store holds %q", got)
	}
	if resp, err := http.Get(f.backend.URL + "/archive/k"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("default store answered %v, %v; want 404", resp.StatusCode, err)
	}
	_, err = f.client.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(bucketName), Key: aws.String("copied"),
		CopySource: aws.String("archive/k")})
	if errorCode(err) != "NotImplemented" {
		t.Fatalf("copy across backends: %v, want NotImplemented", err)
	}
}

func rawGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

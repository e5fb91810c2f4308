package proxy

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// A rename through the proxy in front of gofakes3 (standing in for a store
// without RenameObject): the object moves, its metadata with it.
func TestRenameMovesTheObject(t *testing.T) {
	f := newFixture(t, false)
	if _, err := f.put(t, "src", "body", func(in *s3.PutObjectInput) { in.Metadata = map[string]string{"m": "v"} }); err != nil {
		t.Fatal(err)
	}
	_, err := f.client.RenameObject(context.Background(), &s3.RenameObjectInput{Bucket: aws.String(bucketName),
		Key: aws.String("dst"), RenameSource: aws.String(bucketName + "/src")})
	if err != nil {
		t.Fatalf("rename: %v", err)
	}
	if _, err := f.get(t, "src"); errorCode(err) != "NoSuchKey" {
		t.Fatalf("source after the rename: %v", err)
	}
	head, err := f.client.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(bucketName), Key: aws.String("dst")})
	if err != nil || head.Metadata["m"] != "v" {
		t.Fatalf("destination: %v %v", head, err)
	}
}

// A rename on a backend served without leases is 501: its leases would
// not stop a conditional PutObject the store checks itself from
// committing between the rename's checks and its copy or delete.
func TestRenameOnALeaseFreeBackendIsRefused(t *testing.T) {
	f := newFixture(t, true)
	if _, err := f.put(t, "src", "body", nil); err != nil {
		t.Fatal(err)
	}
	_, err := f.client.RenameObject(context.Background(), &s3.RenameObjectInput{Bucket: aws.String(bucketName),
		Key: aws.String("dst"), RenameSource: aws.String(bucketName + "/src")})
	if code := errorCode(err); code != "NotImplemented" {
		t.Fatalf("rename on a lease-free backend: %v, want NotImplemented", err)
	}
	if _, err := f.get(t, "src"); err != nil {
		t.Fatalf("the source after a refused rename: %v", err)
	}
}

package proxy

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/leasetest"
	"github.com/s3cond/s3cond/precondition"
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

// A rename whose holder vanished after its copy (its rows held, never
// released; its intent recorded, stage copied) is finished by the next
// conditional writer that takes one of its rows: a write on the source's
// old ETag then finds the source gone (404), and the destination keeps
// the copy.
func TestRenameLeftByAVanishedHolderIsFinishedByTheNextWriter(t *testing.T) {
	table := leasetest.New(leasetest.Hooks{})
	f := newFixtureWith(t, fixtureOptions{leaseTable: table})
	put, err := f.put(t, "src", "body", nil)
	if err != nil {
		t.Fatal(err)
	}
	etag := precondition.CanonicalETag(aws.ToString(put.ETag))
	if _, err := f.put(t, "dst", "body", nil); err != nil { // the copy that landed
		t.Fatal(err)
	}
	ctx := context.Background()
	vanished := table.Committer("vanished", leasetest.Timing{Timeout: 100 * time.Millisecond})
	src, dst := bucketName+"/src", bucketName+"/dst"
	for _, row := range [][2]string{{src, dynamolease.RenameLockETag}, {dst, dynamolease.RenameLockETag}, {src, etag}, {dst, "*"}, {dst, etag}} {
		if _, err := vanished.Acquire(ctx, row[0], row[1], nil); err != nil {
			t.Fatal(err)
		}
	}
	intent := renameIntent{Bucket: bucketName, Source: "src", Destination: "dst", SourceETag: etag, Stage: stageCopied, CopyETag: etag}
	for _, path := range []string{src, dst} {
		if err := vanished.PutRenameIntent(ctx, path, intent.encode()); err != nil {
			t.Fatal(err)
		}
	}
	_, err = f.put(t, "src", "overwrite", func(in *s3.PutObjectInput) { in.IfMatch = aws.String(etag) })
	if errorCode(err) != "NoSuchKey" {
		t.Fatalf("the next writer of the source: %v, want NoSuchKey (the rename finished first)", err)
	}
	if _, err := f.get(t, "src"); errorCode(err) != "NoSuchKey" {
		t.Fatalf("source after the finished rename: %v", err)
	}
	if got, err := f.get(t, "dst"); err != nil || got != "body" {
		t.Fatalf("destination: %q %v", got, err)
	}
	if text, err := f.leases.RenameIntent(ctx, src); err != nil || text != "" {
		t.Fatalf("the intent is still there: %q %v", text, err)
	}
}

package embedded

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Copying an object large enough to grow the database file made gofakes3's
// bbolt backend read the source's hash from a memory map that the copy's
// write had just replaced: the process died with "fatal error: fault".
func TestCopiesThatGrowTheFileKeepTheProcessAlive(t *testing.T) {
	ctx, _, c := startStoreWithClient(t)
	bucket := devBucket

	body := bytes.Repeat([]byte("twelve megabytes of it "), 12<<20/23)
	sum := md5.Sum(body)
	wantETag := `"` + hex.EncodeToString(sum[:]) + `"`
	putObject(t, ctx, c, "source", body)
	for i := range 3 { // each copy grows the file by the object's size
		dst := fmt.Sprintf("copy-%d", i)
		out, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: bucket, Key: aws.String(dst), CopySource: aws.String("dev-bucket/source")})
		if err != nil {
			t.Fatalf("copy %d: %v", i, err)
		}
		if got := aws.ToString(out.CopyObjectResult.ETag); got != wantETag {
			t.Fatalf("copy %d: ETag %s, want %s", i, got, wantETag)
		}
		got, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: bucket, Key: aws.String(dst)})
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(got.Body)
		got.Body.Close()
		if err != nil || !bytes.Equal(data, body) {
			t.Fatalf("copy %d: %d bytes read (%v), want the source's %d", i, len(data), err, len(body))
		}
	}
}

// A GET streams bytes the store copied, so writes that free, reuse or remap
// the database's pages while the GET is still being read cannot change them.
// The object is larger than loopback's socket buffers, so most of it is
// still in the store's hands when the writes run.
func TestAnObjectBeingReadIsNotChangedByLaterWrites(t *testing.T) {
	ctx, _, c := startStoreWithClient(t)
	bucket := devBucket

	first := bytes.Repeat([]byte{'a'}, 32<<20)
	putObject(t, ctx, c, "k", first)
	reading, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: bucket, Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	defer reading.Body.Close()
	head := make([]byte, 1024)
	if _, err := io.ReadFull(reading.Body, head); err != nil {
		t.Fatal(err)
	}
	// Mid-read: replace the object (its pages are freed), then write
	// enough to reuse those pages and to grow the file.
	putObject(t, ctx, c, "k", []byte("replaced"))
	for i := range 3 {
		putObject(t, ctx, c, fmt.Sprintf("filler-%d", i), bytes.Repeat([]byte{'z'}, 24<<20))
	}
	rest, err := io.ReadAll(reading.Body)
	if err != nil {
		t.Fatal(err)
	}
	if got := append(head, rest...); !bytes.Equal(got, first) {
		t.Fatalf("the object read while it was replaced came out as %d bytes (%d differ), not the %d it had",
			len(got), differing(got, first), len(first))
	}
}

func differing(a, b []byte) int {
	n := 0
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			n++
		}
	}
	return n + max(len(a), len(b)) - min(len(a), len(b))
}

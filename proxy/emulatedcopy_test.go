package proxy

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/internal/testservers"
)

// newCopyFixture runs the proxy, in native mode without leases for
// anything, in front of a store that ignores CopyObject's destination
// conditions and checks PutObject's and CompleteMultipartUpload's
// atomically (versitygw v1.8.0); emulate turns the emulated copy on.
func newCopyFixture(t *testing.T, emulate bool, tune CopyEmulation) *fixture {
	t.Helper()
	return newFixtureWith(t, fixtureOptions{native: true, storeWrap: testservers.NewCopyConditionsIgnoredStore,
		emulateCopy: emulate, copyEmulation: tune})
}

func (f *fixture) copyTo(src, dst string, mod func(*s3.CopyObjectInput)) (*s3.CopyObjectOutput, error) {
	in := &s3.CopyObjectInput{Bucket: aws.String(bucketName), Key: aws.String(dst), CopySource: aws.String(bucketName + "/" + src)}
	if mod != nil {
		mod(in)
	}
	return f.client.CopyObject(context.Background(), in)
}

func copyIfAbsent(in *s3.CopyObjectInput) { in.IfNoneMatch = aws.String("*") }

func TestEmulatedCopyCreatesOnlyIfAbsent(t *testing.T) {
	f := newCopyFixture(t, true, CopyEmulation{})
	put, err := f.put(t, "src", "source bytes", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.put(t, "other", "other bytes", nil); err != nil {
		t.Fatal(err)
	}
	out, err := f.copyTo("src", "dst", copyIfAbsent)
	if err != nil {
		t.Fatalf("first conditional copy: %v", err)
	}
	if got, want := aws.ToString(out.CopyObjectResult.ETag), aws.ToString(put.ETag); got != want {
		t.Errorf("copy's ETag %s, want the source's MD5 ETag %s", got, want)
	}
	if out.CopyObjectResult.LastModified == nil || out.CopyObjectResult.LastModified.IsZero() {
		t.Errorf("copy's result has no LastModified")
	}
	if _, err := f.copyTo("other", "dst", copyIfAbsent); errorCode(err) != "PreconditionFailed" {
		t.Fatalf("second conditional copy: %v, want PreconditionFailed", err)
	}
	if got, _ := f.get(t, "dst"); got != "source bytes" {
		t.Fatalf("dst holds %q, want the first copy's bytes", got)
	}
}

// TestCopyConditionsIgnoredWithoutEmulation is the control: the same store
// in native mode without the emulation lets a second create overwrite.
func TestCopyConditionsIgnoredWithoutEmulation(t *testing.T) {
	f := newCopyFixture(t, false, CopyEmulation{})
	for _, k := range []string{"src", "other"} {
		if _, err := f.put(t, k, k+" bytes", nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.copyTo("src", "dst", copyIfAbsent); err != nil {
		t.Fatal(err)
	}
	if _, err := f.copyTo("other", "dst", copyIfAbsent); err != nil {
		t.Fatalf("second create straight to the store: %v, want it to win (the store ignores it)", err)
	}
}

// TestEmulatedCopyRaceHasOneWinner: racing conditional creates by copy
// of one key: exactly one wins, and the key holds its bytes.
func TestEmulatedCopyRaceHasOneWinner(t *testing.T) {
	{
		f := newCopyFixture(t, true, CopyEmulation{})
		const racers = 8
		for i := range racers {
			if _, err := f.put(t, "src-"+string(rune('a'+i)), "bytes of "+string(rune('a'+i)), nil); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var winners []string
		for i := range racers {
			src := "src-" + string(rune('a'+i))
			wg.Go(func() {
				_, err := f.copyTo(src, "race", copyIfAbsent)
				switch {
				case err == nil:
					mu.Lock()
					winners = append(winners, src)
					mu.Unlock()
				case errorCode(err) != "PreconditionFailed":
					t.Errorf("copy from %s: %v", src, err)
				}
			})
		}
		wg.Wait()
		if len(winners) != 1 {
			t.Fatalf("%d winners %v, want exactly one", len(winners), winners)
		}
		if got, _ := f.get(t, "race"); got != "bytes of "+strings.TrimPrefix(winners[0], "src-") {
			t.Fatalf("race key holds %q, want the winner %s's bytes", got, winners[0])
		}
	}
}

func TestEmulatedCopyCompareAndSwap(t *testing.T) {
	f := newCopyFixture(t, true, CopyEmulation{})
	if _, err := f.put(t, "src", "new bytes", nil); err != nil {
		t.Fatal(err)
	}
	old, err := f.put(t, "dst", "old bytes", nil)
	if err != nil {
		t.Fatal(err)
	}
	stale := func(in *s3.CopyObjectInput) { in.IfMatch = aws.String(`"0123456789abcdef0123456789abcdef"`) }
	if _, err := f.copyTo("src", "dst", stale); errorCode(err) != "PreconditionFailed" {
		t.Fatalf("copy on a stale ETag: %v, want PreconditionFailed", err)
	}
	if _, err := f.copyTo("src", "dst", func(in *s3.CopyObjectInput) { in.IfMatch = old.ETag }); err != nil {
		t.Fatalf("copy on the current ETag: %v", err)
	}
	if got, _ := f.get(t, "dst"); got != "new bytes" {
		t.Fatalf("dst holds %q after the CAS copy", got)
	}
	// If-Match: * is reduced to the ETag a HEAD read: a missing key is
	// S3's 404, a present one is written.
	anyETag := func(in *s3.CopyObjectInput) { in.IfMatch = aws.String("*") }
	if _, err := f.copyTo("src", "absent", anyETag); errorCode(err) != "NoSuchKey" {
		t.Fatalf("If-Match: * copy to a missing key: %v, want NoSuchKey", err)
	}
	if _, err := f.copyTo("src", "dst", anyETag); err != nil {
		t.Fatalf("If-Match: * copy to a present key: %v", err)
	}
}

// TestEmulatedCopyMetadataDirectives: COPY keeps the source's metadata and
// content type, REPLACE takes the request's, as CopyObject does.
func TestEmulatedCopyMetadataDirectives(t *testing.T) {
	f := newCopyFixture(t, true, CopyEmulation{})
	if _, err := f.put(t, "src", "bytes", func(in *s3.PutObjectInput) {
		in.Metadata = map[string]string{"colour": "blue"}
		in.ContentType = aws.String("text/x-source")
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.copyTo("src", "kept", copyIfAbsent); err != nil {
		t.Fatal(err)
	}
	if _, err := f.copyTo("src", "replaced", func(in *s3.CopyObjectInput) {
		copyIfAbsent(in)
		in.MetadataDirective = "REPLACE"
		in.Metadata = map[string]string{"colour": "red"}
		in.ContentType = aws.String("text/x-request")
	}); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string][2]string{"kept": {"blue", "text/x-source"}, "replaced": {"red", "text/x-request"}} {
		head, err := f.client.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(bucketName), Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		if head.Metadata["colour"] != want[0] || aws.ToString(head.ContentType) != want[1] {
			t.Errorf("%s: colour %q, content type %q; want %q", key, head.Metadata["colour"], aws.ToString(head.ContentType), want)
		}
	}
}

// TestEmulatedCopySourceConditions: x-amz-copy-source-if-match is
// evaluated on the source the copy reads; a failed one writes nothing.
func TestEmulatedCopySourceConditions(t *testing.T) {
	f := newCopyFixture(t, true, CopyEmulation{})
	put, err := f.put(t, "src", "bytes", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.copyTo("src", "dst", func(in *s3.CopyObjectInput) {
		copyIfAbsent(in)
		in.CopySourceIfMatch = aws.String(`"0123456789abcdef0123456789abcdef"`)
	})
	if errorCode(err) != "PreconditionFailed" {
		t.Fatalf("copy with a failing source condition: %v, want PreconditionFailed", err)
	}
	if _, err := f.get(t, "dst"); errorCode(err) != "NoSuchKey" {
		t.Fatalf("dst after a refused copy: %v, want NoSuchKey", err)
	}
	if _, err := f.copyTo("src", "dst", func(in *s3.CopyObjectInput) { copyIfAbsent(in); in.CopySourceIfMatch = put.ETag }); err != nil {
		t.Fatalf("copy with a passing source condition: %v", err)
	}
	if _, err := f.copyTo("missing", "dst2", copyIfAbsent); errorCode(err) != "NoSuchKey" {
		t.Fatalf("copy of a missing source: %v, want NoSuchKey", err)
	}
}

// TestEmulatedCopyLargeFailureLeavesNoUpload: a source above the single-PUT
// limit is copied by parts; gofakes3 has no UploadPartCopy (it answers a
// part without a body with an error), so the copy fails, and the upload it
// began is aborted before the client hears of it.
func TestEmulatedCopyLargeFailureLeavesNoUpload(t *testing.T) {
	f := newCopyFixture(t, true, CopyEmulation{SinglePutLimit: 8, PartSize: 16})
	if _, err := f.put(t, "src", strings.Repeat("x", 40), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.copyTo("src", "dst", copyIfAbsent); err == nil {
		t.Fatal("a copy by parts on a store without UploadPartCopy succeeded")
	}
	uploads, err := f.client.ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{Bucket: aws.String(bucketName)})
	if err != nil {
		t.Fatal(err)
	}
	if len(uploads.Uploads) != 0 {
		t.Fatalf("%d multipart uploads left behind, want none", len(uploads.Uploads))
	}
	if _, err := f.get(t, "dst"); errorCode(err) != "NoSuchKey" {
		t.Fatalf("dst after a failed copy: %v, want NoSuchKey", err)
	}
}

// TestEmulatedCopyRefusesChecksumAlgorithm: a checksum the copy would
// have to compute is refused with 501, never silently dropped.
func TestEmulatedCopyRefusesChecksumAlgorithm(t *testing.T) {
	f := newCopyFixture(t, true, CopyEmulation{})
	if _, err := f.put(t, "src", "bytes", nil); err != nil {
		t.Fatal(err)
	}
	_, err := f.copyTo("src", "dst", func(in *s3.CopyObjectInput) { copyIfAbsent(in); in.ChecksumAlgorithm = "SHA256" })
	if errorCode(err) != "NotImplemented" {
		t.Fatalf("copy with x-amz-checksum-algorithm: %v, want NotImplemented", err)
	}
}

func TestSourceContentMD5OnlyForPlainSingleParts(t *testing.T) {
	const etag = `"5d41402abc4b2a76b9719d911017c592"`
	for _, c := range []struct {
		name   string
		header http.Header
		want   bool
	}{
		{"plain", http.Header{"Etag": {etag}}, true},
		{"multipart", http.Header{"Etag": {`"5d41402abc4b2a76b9719d911017c592-2"`}}, false},
		{"SSE-S3", http.Header{"Etag": {etag}, "X-Amz-Server-Side-Encryption": {"AES256"}}, true},
		{"SSE-KMS", http.Header{"Etag": {etag}, "X-Amz-Server-Side-Encryption": {"aws:kms"}}, false},
		{"SSE-C", http.Header{"Etag": {etag}, "X-Amz-Server-Side-Encryption-Customer-Algorithm": {"AES256"}}, false},
	} {
		if got := sourceContentMD5(c.header) != ""; got != c.want {
			t.Errorf("%s: Content-MD5 sent %v, want %v", c.name, got, c.want)
		}
	}
}

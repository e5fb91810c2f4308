package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// The emulated conditional copy on real versitygw v1.8.0, which ignores a
// CopyObject's destination conditions but checks PutObject's and
// CompleteMultipartUpload's atomically: s3cond runs without leases
// (conditional: native, unverified: versitygw's DeleteObjects ETags are
// ignored too, so a probe would refuse native) and copy_emulation on, with
// a 1 MiB single-PUT limit so a 9 MiB source takes the multipart path.

const emulatedCopyBucket = "emulated-copy"

type copyEnv struct {
	proxy, direct *s3.Client
}

func newCopyEnv(t *testing.T) copyEnv {
	t.Helper()
	env := NewEnv(t, WithBackend(BackendVersityGW), WithConfig(func(c *Config) {
		c.Backend.Conditional = "native"
		c.Backend.NativeUnverified = true
		c.Backend.CopyEmulation = true
		c.Backend.CopyEmulationSinglePutLimit = 1 << 20
	}))
	env.RequireProxy(t)
	e := copyEnv{proxy: env.Client(t, env.RW), direct: env.BackendClient()}
	CreateBucket(t, e.proxy, emulatedCopyBucket)
	return e
}

func putCopyObject(t *testing.T, c *s3.Client, key string, body []byte, mod func(*s3.PutObjectInput)) *s3.PutObjectOutput {
	t.Helper()
	in := &s3.PutObjectInput{Bucket: aws.String(emulatedCopyBucket), Key: aws.String(key), Body: bytes.NewReader(body)}
	if mod != nil {
		mod(in)
	}
	out, err := c.PutObject(context.Background(), in)
	if err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
	return out
}

func copyObject(c *s3.Client, src, dst string, mod func(*s3.CopyObjectInput)) (*s3.CopyObjectOutput, error) {
	in := &s3.CopyObjectInput{Bucket: aws.String(emulatedCopyBucket), Key: aws.String(dst),
		CopySource: aws.String(emulatedCopyBucket + "/" + src)}
	if mod != nil {
		mod(in)
	}
	return c.CopyObject(context.Background(), in)
}

func readObject(t *testing.T, c *s3.Client, key string) []byte {
	t.Helper()
	out, err := c.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(emulatedCopyBucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	defer out.Body.Close()
	body, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// raceCopies sends racers conditional creates by copy of key at once,
// each from its own source, and returns the sources that won.
func raceCopies(t *testing.T, c *s3.Client, key string, racers int) []string {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var winners []string
	start := make(chan struct{})
	for i := range racers {
		src := fmt.Sprintf("%s-src-%d", key, i)
		wg.Go(func() {
			<-start
			_, err := copyObject(c, src, key, func(in *s3.CopyObjectInput) { in.IfNoneMatch = aws.String("*") })
			switch {
			case err == nil:
				mu.Lock()
				winners = append(winners, src)
				mu.Unlock()
			case ErrorCode(err) != "PreconditionFailed":
				t.Errorf("copy %s to %s: %v", src, key, err)
			}
		})
	}
	close(start)
	wg.Wait()
	return winners
}

func seedSources(t *testing.T, c *s3.Client, key string, racers int) {
	t.Helper()
	for i := range racers {
		src := fmt.Sprintf("%s-src-%d", key, i)
		putCopyObject(t, c, src, []byte("bytes of "+src), nil)
	}
}

// TestCopyEmulatedRaceHasOneWinner: N racing create-if-absent copies of
// one key through s3cond: exactly one wins, and the key holds its bytes.
func TestCopyEmulatedRaceHasOneWinner(t *testing.T) {
	e := newCopyEnv(t)
	const racers, rounds = 12, 5
	for round := range rounds {
		key := fmt.Sprintf("race-%d", round)
		seedSources(t, e.proxy, key, racers)
		winners := raceCopies(t, e.proxy, key, racers)
		if len(winners) != 1 {
			t.Fatalf("round %d: %d winners %v, want exactly one", round, len(winners), winners)
		}
		if got := string(readObject(t, e.proxy, key)); got != "bytes of "+winners[0] {
			t.Fatalf("round %d: key holds %q, want the winner %s's bytes", round, got, winners[0])
		}
	}
}

// TestCopyConditionsStraightToVersityGWAllWin is the control: the same
// race sent to versitygw itself: every copy wins, since it ignores them.
func TestCopyConditionsStraightToVersityGWAllWin(t *testing.T) {
	e := newCopyEnv(t)
	const racers = 12
	seedSources(t, e.direct, "direct-race", racers)
	if winners := raceCopies(t, e.direct, "direct-race", racers); len(winners) != racers {
		t.Fatalf("%d of %d copies won straight on versitygw, want all (it ignores copy conditions)", len(winners), racers)
	}
}

// TestCopyEmulatedCompareAndSwap: If-Match on the destination's ETag.
func TestCopyEmulatedCompareAndSwap(t *testing.T) {
	e := newCopyEnv(t)
	putCopyObject(t, e.proxy, "cas-src", []byte("new"), nil)
	old := putCopyObject(t, e.proxy, "cas-dst", []byte("old"), nil)
	putCopyObject(t, e.proxy, "cas-dst", []byte("newer"), nil)
	if _, err := copyObject(e.proxy, "cas-src", "cas-dst", func(in *s3.CopyObjectInput) { in.IfMatch = old.ETag }); ErrorCode(err) != "PreconditionFailed" {
		t.Fatalf("copy on a stale ETag: %v, want PreconditionFailed", err)
	}
	head, err := e.proxy.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(emulatedCopyBucket), Key: aws.String("cas-dst")})
	if err != nil {
		t.Fatal(err)
	}
	out, err := copyObject(e.proxy, "cas-src", "cas-dst", func(in *s3.CopyObjectInput) { in.IfMatch = head.ETag })
	if err != nil {
		t.Fatalf("copy on the current ETag: %v", err)
	}
	if got := string(readObject(t, e.proxy, "cas-dst")); got != "new" {
		t.Fatalf("cas-dst holds %q", got)
	}
	if out.CopyObjectResult == nil || aws.ToString(out.CopyObjectResult.ETag) == "" {
		t.Fatalf("no CopyObjectResult ETag: %+v", out)
	}
}

// objectView is what a copy should carry over: the compared fields.
type objectView struct {
	ETag, ContentType, CacheControl, ContentDisposition string
	Metadata                                            map[string]string
	Tags                                                map[string]string
}

func viewObject(t *testing.T, c *s3.Client, key string) objectView {
	t.Helper()
	ctx := context.Background()
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(emulatedCopyBucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("head %s: %v", key, err)
	}
	tagging, err := c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String(emulatedCopyBucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("tagging of %s: %v", key, err)
	}
	tags := map[string]string{}
	for _, tag := range tagging.TagSet {
		tags[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
	}
	return objectView{ETag: aws.ToString(head.ETag), ContentType: aws.ToString(head.ContentType),
		CacheControl: aws.ToString(head.CacheControl), ContentDisposition: aws.ToString(head.ContentDisposition),
		Metadata: head.Metadata, Tags: tags}
}

// TestCopyEmulatedMatchesRealCopy: what an emulated copy writes (metadata,
// system headers, tags, ETag) is what versitygw's own CopyObject writes,
// with the directives COPY and REPLACE.
func TestCopyEmulatedMatchesRealCopy(t *testing.T) {
	e := newCopyEnv(t)
	putCopyObject(t, e.proxy, "meta-src", []byte("some bytes"), func(in *s3.PutObjectInput) {
		in.Metadata = map[string]string{"colour": "blue", "shape": "round"}
		in.ContentType = aws.String("text/x-source")
		in.CacheControl = aws.String("max-age=60")
		in.ContentDisposition = aws.String("attachment")
		in.Tagging = aws.String("team=a&tier=gold")
	})
	for _, c := range []struct {
		name string
		mod  func(*s3.CopyObjectInput)
	}{
		{"copy", nil},
		{"replace", func(in *s3.CopyObjectInput) {
			in.MetadataDirective = types.MetadataDirectiveReplace
			in.Metadata = map[string]string{"colour": "red"}
			in.ContentType = aws.String("text/x-request")
			in.TaggingDirective = types.TaggingDirectiveReplace
			in.Tagging = aws.String("team=b")
		}},
	} {
		emulated, real := c.name+"-emulated", c.name+"-real"
		if _, err := copyObject(e.proxy, "meta-src", emulated, func(in *s3.CopyObjectInput) {
			if c.mod != nil {
				c.mod(in)
			}
			in.IfNoneMatch = aws.String("*")
		}); err != nil {
			t.Fatalf("%s: emulated copy: %v", c.name, err)
		}
		if _, err := copyObject(e.direct, "meta-src", real, c.mod); err != nil {
			t.Fatalf("%s: versitygw's copy: %v", c.name, err)
		}
		got, want := viewObject(t, e.proxy, emulated), viewObject(t, e.direct, real)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: emulated copy wrote\n%+v\nversitygw's CopyObject wrote\n%+v", c.name, got, want)
		}
	}
}

// TestCopyEmulatedLargeSourceByParts: a source above the single-PUT limit
// is copied on the store by parts: the bytes arrive, the ETag is a
// multipart one, a second create fails at CompleteMultipartUpload, and no
// upload is left behind.
func TestCopyEmulatedLargeSourceByParts(t *testing.T) {
	e := newCopyEnv(t)
	source := bytes.Repeat([]byte("0123456789abcdef"), (9<<20)/16) // 9 MiB: parts of 8 and 1
	putCopyObject(t, e.proxy, "large-src", source, nil)
	putCopyObject(t, e.proxy, "other-src", source[:2<<20], nil)
	create := func(in *s3.CopyObjectInput) { in.IfNoneMatch = aws.String("*") }
	out, err := copyObject(e.proxy, "large-src", "large-dst", create)
	if err != nil {
		t.Fatalf("large conditional copy: %v", err)
	}
	if etag := aws.ToString(out.CopyObjectResult.ETag); !strings.HasSuffix(strings.Trim(etag, `"`), "-2") {
		t.Errorf("ETag %s, want a multipart ETag of two parts", etag)
	}
	if !bytes.Equal(readObject(t, e.proxy, "large-dst"), source) {
		t.Fatal("large-dst does not hold the source's bytes")
	}
	if _, err := copyObject(e.proxy, "other-src", "large-dst", create); ErrorCode(err) != "PreconditionFailed" {
		t.Fatalf("second large create: %v, want PreconditionFailed", err)
	}
	uploads, err := e.direct.ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{Bucket: aws.String(emulatedCopyBucket)})
	if err != nil {
		t.Fatal(err)
	}
	if len(uploads.Uploads) != 0 {
		t.Fatalf("%d multipart uploads left on the store, want none", len(uploads.Uploads))
	}
}

// TestCopyEmulatedSourceConditions: x-amz-copy-source-if-match is held to
// the source the emulated copy reads; a failing one writes nothing.
func TestCopyEmulatedSourceConditions(t *testing.T) {
	e := newCopyEnv(t)
	src := putCopyObject(t, e.proxy, "cond-src", []byte("source"), nil)
	stale := func(in *s3.CopyObjectInput) {
		in.IfNoneMatch = aws.String("*")
		in.CopySourceIfMatch = aws.String(`"0123456789abcdef0123456789abcdef"`)
	}
	if _, err := copyObject(e.proxy, "cond-src", "cond-dst", stale); ErrorCode(err) != "PreconditionFailed" {
		t.Fatalf("copy with a failing source condition: %v, want PreconditionFailed", err)
	}
	if _, err := e.proxy.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(emulatedCopyBucket), Key: aws.String("cond-dst")}); ErrorCode(err) != "NotFound" {
		t.Fatalf("cond-dst after a refused copy: %v, want NotFound", err)
	}
	if _, err := copyObject(e.proxy, "cond-src", "cond-dst", func(in *s3.CopyObjectInput) {
		in.IfNoneMatch = aws.String("*")
		in.CopySourceIfMatch = src.ETag
	}); err != nil {
		t.Fatalf("copy with a passing source condition: %v", err)
	}
	if _, err := copyObject(e.proxy, "no-such-src", "cond-dst2", func(in *s3.CopyObjectInput) { in.IfNoneMatch = aws.String("*") }); ErrorCode(err) != "NoSuchKey" {
		t.Fatalf("copy of a missing source: %v, want NoSuchKey", err)
	}
}

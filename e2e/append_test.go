package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Append (docs/spec.md, "Append") through s3cond on versitygw and on
// s3rver, neither of which appends: PutObject with WriteOffsetBytes, as
// aws-sdk-go-v2 sends it (with its default trailing CRC32 checksum, which
// s3cond verifies over the appended bytes).

const appendBucket = "appends"

// appendTo sends an append of body at offset.
func appendTo(ctx context.Context, c *s3.Client, key string, offset int64, body []byte, mod func(*s3.PutObjectInput)) (*s3.PutObjectOutput, error) {
	in := &s3.PutObjectInput{Bucket: aws.String(appendBucket), Key: aws.String(key),
		Body: bytes.NewReader(body), WriteOffsetBytes: aws.Int64(offset)}
	if mod != nil {
		mod(in)
	}
	return c.PutObject(ctx, in)
}

func newAppendEnv(t *testing.T, backend BackendKind) (*Env, *s3.Client) {
	t.Helper()
	e := NewEnv(t, WithBackend(backend))
	e.RequireProxy(t)
	rw := e.Client(t, e.RW)
	CreateBucket(t, rw, appendBucket)
	return e, rw
}

func requireAnswer(t *testing.T, what string, err error, status int, code string) {
	t.Helper()
	if HTTPStatus(err) != status || ErrorCode(err) != code {
		t.Fatalf("%s: %v, want %d %s", what, err, status, code)
	}
}

func requireBytes(t *testing.T, ctx context.Context, c *s3.Client, key string, want []byte) {
	t.Helper()
	if got := getBytes(t, ctx, c, appendBucket, key); !bytes.Equal(got, want) {
		t.Fatalf("%s holds %d bytes, want %d (equal: %v)", key, len(got), len(want), bytes.Equal(got, want))
	}
}

// TestAppendSmall: a new object, appends to it (its content type and
// metadata kept), a wrong offset, the client's conditions, and a body
// whose checksum fails, which leaves the object as it was.
func TestAppendSmall(t *testing.T) {
	for _, backend := range []BackendKind{BackendVersityGW, BackendS3rver} {
		t.Run(string(backend), func(t *testing.T) {
			e, rw := newAppendEnv(t, backend)
			ctx := t.Context()
			first, second := []byte("first line\n"), []byte("second line\n")
			out, err := appendTo(ctx, rw, "log", 0, first, func(in *s3.PutObjectInput) {
				in.ContentType = aws.String("text/plain")
				in.Metadata = map[string]string{"origin": "append-test"}
				in.Tagging = aws.String("kind=log")
			})
			if err != nil {
				t.Fatalf("append at 0 to a missing key: %v", err)
			}
			if aws.ToInt64(out.Size) != int64(len(first)) {
				t.Errorf("x-amz-object-size %d, want %d", aws.ToInt64(out.Size), len(first))
			}
			_, err = appendTo(ctx, rw, "log", 0, second, nil)
			requireAnswer(t, "append at 0 to an existing object", err, 400, "InvalidWriteOffset")
			_, err = appendTo(ctx, rw, "log", int64(len(first))+1, second, nil)
			requireAnswer(t, "append past the end", err, 400, "InvalidWriteOffset")
			_, err = appendTo(ctx, rw, "missing", 5, second, nil)
			requireAnswer(t, "append at 5 to a missing key", err, 400, "InvalidWriteOffset")
			_, err = appendTo(ctx, rw, "log", int64(len(first)), second, func(in *s3.PutObjectInput) { in.IfMatch = aws.String(`"0123"`) })
			requireAnswer(t, "append with a wrong If-Match", err, 412, "PreconditionFailed")
			_, err = appendTo(ctx, rw, "log", int64(len(first)), second, func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") })
			requireAnswer(t, "append with If-None-Match: * to an existing object", err, 412, "PreconditionFailed")
			_, err = appendTo(ctx, rw, "log", int64(len(first)), second, func(in *s3.PutObjectInput) {
				in.ChecksumCRC32 = aws.String("AAAAAA==") // not these bytes' CRC32
			})
			requireAnswer(t, "append with a wrong checksum", err, 400, "BadDigest")
			requireBytes(t, ctx, e.BackendClient(), "log", first)

			out, err = appendTo(ctx, rw, "log", int64(len(first)), second, func(in *s3.PutObjectInput) { in.IfMatch = out.ETag })
			if err != nil {
				t.Fatalf("append at the object's size: %v", err)
			}
			want := append(append([]byte(nil), first...), second...)
			if aws.ToInt64(out.Size) != int64(len(want)) {
				t.Errorf("x-amz-object-size %d, want %d", aws.ToInt64(out.Size), len(want))
			}
			requireBytes(t, ctx, rw, "log", want)
			head, err := rw.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(appendBucket), Key: aws.String("log")})
			if err != nil {
				t.Fatal(err)
			}
			if aws.ToString(head.ContentType) != "text/plain" || head.Metadata["origin"] != "append-test" {
				t.Errorf("after an append: Content-Type %q, metadata %v; want the object's own kept", aws.ToString(head.ContentType), head.Metadata)
			}
			if backend == BackendVersityGW { // s3rver ignores x-amz-tagging on a write
				requireAppendTags(t, ctx, rw, "log", "kind=log")
			}
			if aws.ToString(head.ETag) != aws.ToString(out.ETag) {
				t.Errorf("append answered ETag %s, the object has %s", aws.ToString(out.ETag), aws.ToString(head.ETag))
			}
			// As a query parameter (a presigned URL's) the offset is 501: a
			// store would take it for a plain PutObject and replace the object.
			Do(t, e.Endpoint, e.RW, RawRequest{Method: http.MethodPut, Path: "/" + appendBucket + "/log",
				Query: map[string][]string{"x-amz-write-offset-bytes": {strconv.Itoa(len(want))}}, Body: []byte("x")}).
				RequireError(t, http.StatusNotImplemented, "NotImplemented")
			requireBytes(t, ctx, e.BackendClient(), "log", want)
		})
	}
}

// TestAppendLarge: an object larger than the single-PUT limit (8 MiB) is
// appended to by a multipart upload: on versitygw UploadPartCopy of two
// ranges, then the new part; on s3rver, which has no UploadPartCopy, one
// part of the object's bytes and the new ones (versitygw answers a
// multipart ETag). A body whose checksum fails midway leaves
// the object unchanged and no upload open.
func TestAppendLarge(t *testing.T) {
	for _, backend := range []BackendKind{BackendVersityGW, BackendS3rver} {
		t.Run(string(backend), func(t *testing.T) {
			e, rw := newAppendEnv(t, backend)
			ctx := t.Context()
			seed := bytes.Repeat([]byte("0123456789abcdef"), (17<<20)/16+3) // two ranges of 8 MiB and more
			if _, err := appendTo(ctx, rw, "big", 0, seed, func(in *s3.PutObjectInput) {
				in.ContentType = aws.String("application/x-log")
				in.Metadata = map[string]string{"origin": "large"}
				in.Tagging = aws.String("kind=log")
			}); err != nil {
				t.Fatalf("create: %v", err)
			}
			more := bytes.Repeat([]byte("appended "), 1<<17)
			_, err := appendTo(ctx, rw, "big", int64(len(seed)), more, func(in *s3.PutObjectInput) {
				in.ChecksumCRC32 = aws.String("AAAAAA==")
			})
			requireAnswer(t, "large append with a wrong checksum", err, 400, "BadDigest")
			requireBytes(t, ctx, e.BackendClient(), "big", seed)
			if backend == BackendVersityGW { // s3rver lists no uploads
				requireNoUploads(t, ctx, e.BackendClient(), appendBucket)
			}
			out, err := appendTo(ctx, rw, "big", int64(len(seed)), more, nil)
			if err != nil {
				t.Fatalf("large append: %v", err)
			}
			want := append(append([]byte(nil), seed...), more...)
			requireBytes(t, ctx, rw, "big", want)
			// s3rver gives a completed upload the MD5 of its bytes.
			if backend == BackendVersityGW && !strings.Contains(aws.ToString(out.ETag), "-") {
				t.Errorf("ETag %s: want a multipart ETag for an append assembled by a multipart upload", aws.ToString(out.ETag))
			}
			// And again, now on the multipart object.
			if _, err := appendTo(ctx, rw, "big", int64(len(want)), []byte("tail"), nil); err != nil {
				t.Fatalf("second large append: %v", err)
			}
			requireBytes(t, ctx, rw, "big", append(want, "tail"...))
			head, err := rw.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(appendBucket), Key: aws.String("big")})
			if err != nil {
				t.Fatal(err)
			}
			if aws.ToString(head.ContentType) != "application/x-log" || head.Metadata["origin"] != "large" {
				t.Errorf("after two large appends: Content-Type %q, metadata %v; want the object's own kept", aws.ToString(head.ContentType), head.Metadata)
			}
			if backend == BackendVersityGW { // s3rver ignores x-amz-tagging on a write
				requireAppendTags(t, ctx, rw, "big", "kind=log")
			}
			if backend == BackendVersityGW {
				requireNoUploads(t, ctx, e.BackendClient(), appendBucket)
			}
		})
	}
}

// TestAppendRaces: eight clients append at one offset at once: exactly one
// gets 200, the others InvalidWriteOffset (or 409, retry), and the object
// is the seed and the winner's bytes. On a missing key (creates at 0), a
// small object (rewrite) and a large one (the multipart path).
func TestAppendRaces(t *testing.T) {
	for _, backend := range []BackendKind{BackendVersityGW, BackendS3rver} {
		t.Run(string(backend), func(t *testing.T) {
			e, rw := newAppendEnv(t, backend)
			ctx := t.Context()
			raceAppends(t, ctx, rw, e.BackendClient(), "race-new", nil, 8) // creates at offset 0
			for _, size := range []int{64, 9 << 20} {
				key := "race-" + strconv.Itoa(size)
				seed := bytes.Repeat([]byte("s"), size)
				if _, err := appendTo(ctx, rw, key, 0, seed, nil); err != nil {
					t.Fatal(err)
				}
				raceAppends(t, ctx, rw, e.BackendClient(), key, seed, 8)
			}
		})
	}
}

func raceAppends(t *testing.T, ctx context.Context, rw, direct *s3.Client, key string, seed []byte, racers int) {
	t.Helper()
	errs := make([]error, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = appendTo(ctx, rw, key, int64(len(seed)), []byte("<appended by "+strconv.Itoa(i)+">"), nil)
		}()
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("%s: appenders %d and %d both won", key, winner, i)
		case err == nil:
			winner = i
		case ErrorCode(err) != "InvalidWriteOffset" && HTTPStatus(err) != http.StatusConflict:
			t.Errorf("%s: appender %d: %v, want 400 InvalidWriteOffset or 409", key, i, err)
		}
	}
	if winner < 0 {
		t.Fatalf("%s: no appender won: %v", key, errs)
	}
	want := append(append([]byte(nil), seed...), "<appended by "+strconv.Itoa(winner)+">"...)
	if got := getBytes(t, ctx, direct, appendBucket, key); !bytes.Equal(got, want) {
		t.Fatalf("%s: the store holds %d bytes ending %q, want the seed and appender %d's bytes", key, len(got), got[max(0, len(got)-24):], winner)
	}
}

// TestAppendUnderWritePolicies: an append is a PutObject to the bucket's
// write policy. Without If-Match it is 403 where conditions are required
// (with it, it appends), and under create_only it is taken as a create:
// offset 0 creates, an append to an existing object is 412.
func TestAppendUnderWritePolicies(t *testing.T) {
	e := NewEnv(t, WithProcessEnv("S3COND_CREATE_ONLY=legacy-*", "S3COND_REQUIRE_CONDITIONAL_WRITES=ledger-*"))
	e.RequireProxy(t)
	ctx := t.Context()
	c := e.Client(t, e.RW)
	put := func(bucket string, offset int64, body string, ifMatch *string) (*s3.PutObjectOutput, error) {
		return c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("log"),
			Body: strings.NewReader(body), WriteOffsetBytes: aws.Int64(offset), IfMatch: ifMatch})
	}
	CreateBucket(t, c, "ledger-appends")
	_, err := put("ledger-appends", 0, "one", nil)
	requireAnswer(t, "an append without a condition under require_conditional_writes", err, 403, "AccessDenied")
	requireMissing(t, ctx, e.BackendClient(), "ledger-appends", "log")
	v1, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("ledger-appends"), Key: aws.String("log"),
		Body: strings.NewReader("one"), WriteOffsetBytes: aws.Int64(0), IfNoneMatch: aws.String("*")})
	if err != nil {
		t.Fatalf("an append at 0 with If-None-Match: * under require_conditional_writes: %v", err)
	}
	if _, err := put("ledger-appends", 3, "two", v1.ETag); err != nil {
		t.Fatalf("an append with If-Match under require_conditional_writes: %v", err)
	}
	if got := getBytes(t, ctx, c, "ledger-appends", "log"); string(got) != "onetwo" {
		t.Fatalf("ledger-appends/log holds %q", got)
	}

	CreateBucket(t, c, "legacy-appends")
	if _, err := put("legacy-appends", 0, "one", nil); err != nil {
		t.Fatalf("an append at 0 creating under create_only: %v", err)
	}
	_, err = put("legacy-appends", 3, "two", nil)
	requireAnswer(t, "an append to an existing object under create_only", err, 412, "PreconditionFailed")
	if got := getBytes(t, ctx, c, "legacy-appends", "log"); string(got) != "one" {
		t.Fatalf("legacy-appends/log holds %q", got)
	}
}

// TestAppendRacesLeaseFree: on versitygw served natively (no leases; it
// checks PutObject's and Complete's If-Match itself), an append's final
// write carries If-Match on the version it read, and the store's check
// leaves one winner of eight at one offset, on the rewrite and on the
// multipart path.
func TestAppendRacesLeaseFree(t *testing.T) {
	e := NewEnv(t, WithBackend(BackendVersityGW), WithConfig(func(c *Config) {
		c.Backend.Conditional = "native"
		c.Backend.NativeUnverified = true
	}))
	e.RequireProxy(t)
	ctx := t.Context()
	rw := e.Client(t, e.RW)
	CreateBucket(t, rw, appendBucket)
	for _, size := range []int{64, 9 << 20} {
		key := "native-race-" + strconv.Itoa(size)
		seed := bytes.Repeat([]byte("n"), size)
		if _, err := appendTo(ctx, rw, key, 0, seed, nil); err != nil {
			t.Fatal(err)
		}
		raceAppends(t, ctx, rw, e.BackendClient(), key, seed, 8)
	}
	requireNoUploads(t, ctx, e.BackendClient(), appendBucket)
}

// TestAppendStreams: an append to a 200 MiB object on s3rver, which has no
// UploadPartCopy, streams the object's bytes through s3cond into the
// upload's one part; s3cond's peak memory stays well below the object.
func TestAppendStreams(t *testing.T) {
	e, rw := newAppendEnv(t, BackendS3rver)
	ctx := t.Context()
	if _, err := rw.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(appendBucket), Key: aws.String("big"),
		Body: NewPatternReader(200, bigObjectSize), ContentLength: aws.Int64(bigObjectSize)}); err != nil {
		t.Fatalf("put 200 MiB: %v", err)
	}
	tail := []byte("and a tail")
	if _, err := appendTo(ctx, rw, "big", bigObjectSize, tail, nil); err != nil {
		t.Fatalf("append to 200 MiB: %v", err)
	}
	wantHash, _, err := SHA256(io.MultiReader(NewPatternReader(200, bigObjectSize), bytes.NewReader(tail)))
	if err != nil {
		t.Fatal(err)
	}
	out, err := rw.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(appendBucket), Key: aws.String("big")})
	if err != nil {
		t.Fatal(err)
	}
	gotHash, n, err := SHA256(out.Body)
	out.Body.Close()
	if err != nil || n != bigObjectSize+int64(len(tail)) || gotHash != wantHash {
		t.Fatalf("read back %d bytes (%v), SHA-256 %s, want %d bytes with %s", n, err, gotHash, bigObjectSize+len(tail), wantHash)
	}
	rss, err := PeakRSSKiB(e.Proxies[0].Process.Pid())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("s3cond peak RSS (VmHWM) after a 200 MiB put, its append and its read: %d MiB", rss>>10)
	if limit := int64(bigObjectSize/2) >> 10; rss > limit {
		t.Errorf("s3cond peak RSS %d MiB is over half the object size: the append buffers the object", rss>>10)
	}
}

// requireAppendTags fails unless key's tags are want ("k=v").
func requireAppendTags(t *testing.T, ctx context.Context, c *s3.Client, key, want string) {
	t.Helper()
	out, err := c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String(appendBucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("tags of %s: %v", key, err)
	}
	var got []string
	for _, tag := range out.TagSet {
		got = append(got, aws.ToString(tag.Key)+"="+aws.ToString(tag.Value))
	}
	if strings.Join(got, "&") != want {
		t.Errorf("tags of %s after appends: %v, want %s", key, got, want)
	}
}

// TestAppendStrictMode: with every write leased (lease.serialize:
// all-writes, whose lease rows record the key's state on release), appends
// record the version they made: an If-Match on an append's ETag then
// replaces the object, and racing appends still have one winner.
func TestAppendStrictMode(t *testing.T) {
	for _, backend := range []BackendKind{BackendVersityGW, BackendS3rver} {
		t.Run(string(backend), func(t *testing.T) {
			e := NewEnv(t, WithBackend(backend), WithProcessEnv("S3COND_LEASE_SERIALIZE=all-writes"))
			e.RequireProxy(t)
			ctx := t.Context()
			rw := e.Client(t, e.RW)
			CreateBucket(t, rw, appendBucket)
			for _, size := range []int{64, 9 << 20} {
				key := "strict-" + strconv.Itoa(size)
				seed := bytes.Repeat([]byte("x"), size)
				if _, err := appendTo(ctx, rw, key, 0, seed, nil); err != nil {
					t.Fatal(err)
				}
				out, err := appendTo(ctx, rw, key, int64(size), []byte("more"), nil)
				if err != nil {
					t.Fatalf("append to %s: %v", key, err)
				}
				if _, err := rw.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(appendBucket), Key: aws.String(key),
					Body: strings.NewReader("replaced"), IfMatch: out.ETag}); err != nil {
					t.Fatalf("If-Match on the append's ETag %s: %v", aws.ToString(out.ETag), err)
				}
				raceAppends(t, ctx, rw, e.BackendClient(), key, []byte("replaced"), 8)
			}
		})
	}
}

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
)

// RenameObject through s3cond (docs/spec.md, "RenameObject"), with the
// current aws-sdk-go-v2's RenameObject, on versitygw and on s3rver (a store
// with no conditions at all: every answer here is s3cond's).
func TestRenameObject(t *testing.T) {
	for _, kind := range []BackendKind{BackendVersityGW, BackendS3rver} {
		t.Run(string(kind), func(t *testing.T) {
			e := NewEnv(t, WithBackend(kind))
			e.RequireProxy(t)
			c := e.Client(t, e.RW)
			ctx := t.Context()
			bucket := "rename-" + string(kind)
			CreateBucket(t, c, bucket)
			t.Run("plain", func(t *testing.T) { renamePlain(t, ctx, c, bucket) })
			t.Run("conditions", func(t *testing.T) { renameConditions(t, ctx, c, bucket) })
			t.Run("refusals", func(t *testing.T) { renameRefusals(t, ctx, c, e, bucket) })
			t.Run("client token", func(t *testing.T) { renameClientToken(t, ctx, c, bucket) })
			t.Run("race", func(t *testing.T) { renameRace(t, ctx, c, bucket) })
		})
	}
}

func renameInput(bucket, source, destination string) *s3.RenameObjectInput {
	return &s3.RenameObjectInput{Bucket: aws.String(bucket), Key: aws.String(destination),
		RenameSource: aws.String(bucket + "/" + source)}
}

func renamePlain(t *testing.T, ctx context.Context, c *s3.Client, bucket string) {
	_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("plain/src"),
		Body: bytes.NewReader([]byte("renamed body")), ContentType: aws.String("text/x-renamed"),
		Metadata: map[string]string{"kept": "yes"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.RenameObject(ctx, renameInput(bucket, "plain/src", "plain/dst")); err != nil {
		t.Fatalf("rename: %v", err)
	}
	requireMissing(t, ctx, c, bucket, "plain/src")
	if got := string(getBytes(t, ctx, c, bucket, "plain/dst")); got != "renamed body" {
		t.Fatalf("destination body %q", got)
	}
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("plain/dst")})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(head.ContentType) != "text/x-renamed" || head.Metadata["kept"] != "yes" {
		t.Fatalf("metadata not kept: %q %v", aws.ToString(head.ContentType), head.Metadata)
	}
	// Missing source: 404 NoSuchKey.
	_, err = c.RenameObject(ctx, renameInput(bucket, "plain/src", "plain/other"))
	requireAPIError(t, err, "NoSuchKey", http.StatusNotFound)
}

func renameConditions(t *testing.T, ctx context.Context, c *s3.Client, bucket string) {
	src := putBytes(t, ctx, c, bucket, "cond/src", []byte("source"))
	dst := putBytes(t, ctx, c, bucket, "cond/dst", []byte("destination"))
	past, future := time.Now().Add(-24*time.Hour), time.Now().Add(24*time.Hour)
	failing := map[string]func(*s3.RenameObjectInput){
		"If-Match":                   func(in *s3.RenameObjectInput) { in.DestinationIfMatch = aws.String(`"0123"`) },
		"If-None-Match":              func(in *s3.RenameObjectInput) { in.DestinationIfNoneMatch = aws.String("*") },
		"If-Unmodified-Since":        func(in *s3.RenameObjectInput) { in.DestinationIfUnmodifiedSince = &past },
		"If-Modified-Since":          func(in *s3.RenameObjectInput) { in.DestinationIfModifiedSince = &future },
		"source If-Match":            func(in *s3.RenameObjectInput) { in.SourceIfMatch = aws.String(`"0123"`) },
		"source If-None-Match":       func(in *s3.RenameObjectInput) { in.SourceIfNoneMatch = src.ETag },
		"source If-Modified-Since":   func(in *s3.RenameObjectInput) { in.SourceIfModifiedSince = &future },
		"source If-Unmodified-Since": func(in *s3.RenameObjectInput) { in.SourceIfUnmodifiedSince = &past },
	}
	for name, set := range failing {
		in := renameInput(bucket, "cond/src", "cond/dst")
		set(in)
		_, err := c.RenameObject(ctx, in)
		requireAPIError(t, err, "PreconditionFailed", http.StatusPreconditionFailed)
		if t.Failed() {
			t.Fatalf("%s: the failing condition did not give 412", name)
		}
	}
	// Both keys are as they were.
	if string(getBytes(t, ctx, c, bucket, "cond/src")) != "source" || string(getBytes(t, ctx, c, bucket, "cond/dst")) != "destination" {
		t.Fatal("a failed rename changed a key")
	}
	// The same conditions, holding: the rename replaces the destination.
	in := renameInput(bucket, "cond/src", "cond/dst")
	in.DestinationIfMatch, in.SourceIfMatch = dst.ETag, src.ETag
	in.DestinationIfUnmodifiedSince, in.SourceIfUnmodifiedSince = &future, &future
	if _, err := c.RenameObject(ctx, in); err != nil {
		t.Fatalf("rename with holding conditions: %v", err)
	}
	requireMissing(t, ctx, c, bucket, "cond/src")
	if string(getBytes(t, ctx, c, bucket, "cond/dst")) != "source" {
		t.Fatal("destination not replaced")
	}
}

func renameRefusals(t *testing.T, ctx context.Context, c *s3.Client, e *Env, bucket string) {
	putBytes(t, ctx, c, bucket, "refuse/src", []byte("x"))
	in := renameInput(bucket, "refuse/src", "refuse/dir/")
	_, err := c.RenameObject(ctx, in)
	requireAPIError(t, err, "InvalidRequest", http.StatusBadRequest)
	in = renameInput(bucket, "refuse/src", "refuse/dst")
	in.RenameSource = aws.String("another-bucket/refuse/src")
	_, err = c.RenameObject(ctx, in)
	requireAPIError(t, err, "InvalidRequest", http.StatusBadRequest)
	in = renameInput(bucket, "refuse/src", "refuse/dst")
	in.ClientToken = aws.String(strings.Repeat("a", 65))
	_, err = c.RenameObject(ctx, in)
	requireAPIError(t, err, "InvalidArgument", http.StatusBadRequest)
	// A read-only key may not rename.
	_, err = e.Client(t, e.RO).RenameObject(ctx, renameInput(bucket, "refuse/src", "refuse/dst"))
	requireAPIError(t, err, "AccessDenied", http.StatusForbidden)
	if string(getBytes(t, ctx, c, bucket, "refuse/src")) != "x" {
		t.Fatal("a refused rename moved the source")
	}
}

func renameClientToken(t *testing.T, ctx context.Context, c *s3.Client, bucket string) {
	putBytes(t, ctx, c, bucket, "token/src", []byte("first"))
	in := renameInput(bucket, "token/src", "token/dst")
	in.ClientToken = aws.String("token-0123456789")
	if _, err := c.RenameObject(ctx, in); err != nil {
		t.Fatal(err)
	}
	// A new object at the source: the replay must not move it.
	putBytes(t, ctx, c, bucket, "token/src", []byte("second"))
	if _, err := c.RenameObject(ctx, in); err != nil {
		t.Fatalf("replay: %v", err)
	}
	if string(getBytes(t, ctx, c, bucket, "token/src")) != "second" || string(getBytes(t, ctx, c, bucket, "token/dst")) != "first" {
		t.Fatal("the replay renamed again")
	}
	other := renameInput(bucket, "token/src", "token/elsewhere")
	other.ClientToken = in.ClientToken
	_, err := c.RenameObject(ctx, other)
	requireAPIError(t, err, "IdempotencyParameterMismatch", http.StatusBadRequest)
	requireMissing(t, ctx, c, bucket, "token/elsewhere")
}

// renameRace: renames of one source to several destinations at once:
// exactly one wins, and exactly one copy exists.
func renameRace(t *testing.T, ctx context.Context, c *s3.Client, bucket string) {
	const racers = 6
	for round := range 3 {
		putBytes(t, ctx, c, bucket, "race/src", []byte("contended"))
		var wins atomic.Int32
		var wg sync.WaitGroup
		dsts := make([]string, racers)
		for i := range racers {
			dsts[i] = "race/dst-" + string(rune('a'+round)) + string(rune('a'+i))
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := c.RenameObject(ctx, renameInput(bucket, "race/src", dsts[i]))
				var apiErr smithy.APIError
				switch {
				case err == nil:
					wins.Add(1)
				case errors.As(err, &apiErr) && (apiErr.ErrorCode() == "NoSuchKey" || apiErr.ErrorCode() == "ConditionalRequestConflict"):
				default:
					t.Errorf("racer %d: %v", i, err)
				}
			}()
		}
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("round %d: %d renames won, want 1", round, wins.Load())
		}
		requireMissing(t, ctx, c, bucket, "race/src")
		copies := 0
		for _, d := range dsts {
			if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(d)}); err == nil {
				copies++
			}
		}
		if copies != 1 {
			t.Fatalf("round %d: %d copies exist, want 1", round, copies)
		}
	}
}

func requireAPIError(t *testing.T, err error, code string, status int) {
	t.Helper()
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != code {
		t.Errorf("got %v, want %s", err, code)
		return
	}
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) && re.HTTPStatusCode() != status {
		t.Errorf("got status %d, want %d", re.HTTPStatusCode(), status)
	}
}

// TestRenameObjectBoto3: boto3 1.43's rename_object (which fills
// ClientToken itself) through s3cond on s3rver: the rename, S3's answers
// for a missing source and a failed If-None-Match, a replayed token doing
// nothing more, and a token reused with other parameters.
func TestRenameObjectBoto3(t *testing.T) {
	e := NewEnv(t, WithBackend(BackendS3rver))
	e.RequireProxy(t)
	CreateBucket(t, e.Client(t, e.RW), "rename-boto3")
	script, err := filepath.Abs(filepath.Join("scripts", "rename_boto3.py"))
	if err != nil {
		t.Fatal(err)
	}
	out := runClient(t, e.RW, t.TempDir(), "python3", script, e.Endpoint, "rename-boto3")
	var seen map[string]any
	if err := json.Unmarshal([]byte(out), &seen); err != nil {
		t.Fatalf("script output %q: %v", out, err)
	}
	want := map[string]any{
		"rename": "ok", "source-after": "404 404", "destination-body": "boto3 body",
		"destination-metadata": map[string]any{"kept": "yes"},
		"missing-source":       "404 NoSuchKey", "destination-exists": "412 PreconditionFailed",
		"replay": "ok", "replay-again": "ok", "source-after-replay": "third",
		"mismatch": "400 IdempotencyParameterMismatch",
	}
	for k, v := range want {
		if fmt.Sprint(seen[k]) != fmt.Sprint(v) {
			t.Errorf("%s: boto3 saw %v, want %v", k, seen[k], v)
		}
	}
}

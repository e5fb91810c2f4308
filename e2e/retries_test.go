package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3cond/s3cond/internal/testservers"
)

// TestRetriedCompleteAnswersAsTheFirst (issue 36 item 4): a
// CompleteMultipartUpload sent again after its 200, through another s3cond
// of the fleet (one lease table on dynalite), answers 200 with the first
// answer's ETag, Location, Bucket, Key and checksums, unconditional, with
// If-None-Match: * or with If-Match, on versitygw and on s3rver (which
// alone answers 500, and through an s3cond without the record 412). A
// retry naming other parts, or sent by another principal, is not the
// same request and keeps the store's or the condition's error.
func TestRetriedCompleteAnswersAsTheFirst(t *testing.T) {
	for _, backend := range []BackendKind{BackendVersityGW, BackendS3rver} {
		t.Run(string(backend), func(t *testing.T) {
			t.Parallel()
			e, clients := newFleet(t, backend)
			other := e.ClientAt(t, e.Proxies[2].Endpoint, e.Granted)
			CreateBucket(t, clients[0], "granted-retries")
			ctx := t.Context()
			for _, cond := range []string{"none", "If-None-Match", "If-Match"} {
				t.Run(cond, func(t *testing.T) {
					key := "retried-" + cond
					in := completeInput(t, ctx, clients[0], "granted-retries", key, cond)
					first, err := clients[0].CompleteMultipartUpload(ctx, in)
					if err != nil {
						t.Fatalf("first Complete: %v", err)
					}
					again, err := clients[1].CompleteMultipartUpload(ctx, in)
					if err != nil {
						t.Fatalf("retried Complete through another s3cond: %v, want 200 as the first", err)
					}
					if got, want := completeAnswer(again), completeAnswer(first); got != want {
						t.Fatalf("retried Complete answered %s, the first %s", got, want)
					}
					fewer := *in
					fewer.MultipartUpload = &types.CompletedMultipartUpload{Parts: in.MultipartUpload.Parts[:1]}
					if _, err := clients[1].CompleteMultipartUpload(ctx, &fewer); err == nil {
						t.Fatal("a Complete of the same upload naming other parts answered 200, want the store's error")
					}
					if _, err := other.CompleteMultipartUpload(ctx, in); err == nil {
						t.Fatal("another principal's Complete of the same upload answered 200, want the store's error")
					}
					if got := getBytes(t, ctx, clients[2], "granted-retries", key); !bytes.Equal(got, twoParts()) {
						t.Fatalf("object holds %d bytes, want the two parts", len(got))
					}
				})
			}
		})
	}
}

// twoParts is the object each completion makes: a 5 MiB part and a short one.
func twoParts() []byte {
	return append(bytes.Repeat([]byte("p"), 5<<20), []byte("tail")...)
}

// completeInput uploads two parts of key and returns their Complete,
// carrying cond ("If-Match" names the ETag of an object put there first).
func completeInput(t *testing.T, ctx context.Context, c *s3.Client, bucket, key, cond string) *s3.CompleteMultipartUploadInput {
	t.Helper()
	in := &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key)}
	switch cond {
	case "If-None-Match":
		in.IfNoneMatch = aws.String("*")
	case "If-Match":
		in.IfMatch = putBytes(t, ctx, c, bucket, key, []byte("before")).ETag
	}
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatal(err)
	}
	in.UploadId = up.UploadId
	body := twoParts()
	parts := [][]byte{body[:5<<20], body[5<<20:]}
	in.MultipartUpload = &types.CompletedMultipartUpload{}
	for i, p := range parts {
		part, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: up.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(p)})
		if err != nil {
			t.Fatal(err)
		}
		in.MultipartUpload.Parts = append(in.MultipartUpload.Parts, types.CompletedPart{ETag: part.ETag, PartNumber: aws.Int32(int32(i + 1)),
			ChecksumCRC32: part.ChecksumCRC32})
	}
	return in
}

// completeAnswer is what a Complete's answer says of the object.
func completeAnswer(o *s3.CompleteMultipartUploadOutput) string {
	return fmt.Sprintf("ETag %s Location %s Bucket %s Key %s CRC32 %s SHA256 %s type %s version %s",
		aws.ToString(o.ETag), aws.ToString(o.Location), aws.ToString(o.Bucket), aws.ToString(o.Key),
		aws.ToString(o.ChecksumCRC32), aws.ToString(o.ChecksumSHA256), o.ChecksumType, aws.ToString(o.VersionId))
}

// TestRetriedCompleteWithBoto3: boto3 (pip's, 1.40 or later: it sends
// If-None-Match on a Complete) completes an upload with a CRC32 checksum,
// then sends the same Complete again: 200 with the same ETag, Location,
// Bucket, Key and checksum fields, with and without If-None-Match: *, on
// versitygw and on s3rver.
func TestRetriedCompleteWithBoto3(t *testing.T) {
	testservers.Require(t, "boto3")
	script, err := filepath.Abs(filepath.Join("scripts", "retried_complete_boto3.py"))
	if err != nil {
		t.Fatal(err)
	}
	for _, backend := range []BackendKind{BackendVersityGW, BackendS3rver} {
		t.Run(string(backend), func(t *testing.T) {
			t.Parallel()
			e := NewEnv(t, WithBackend(backend))
			e.RequireProxy(t)
			CreateBucket(t, e.Client(t, e.RW), "boto3-retries")
			for _, ifNoneMatch := range []string{"", "*"} {
				out, err := runCompatProgram(t, e, t.TempDir(), nil, "python3", script, e.Endpoint, "boto3-retries",
					"key-"+string(backend)+ifNoneMatchName(ifNoneMatch), ifNoneMatch)
				if err != nil {
					t.Fatal(err)
				}
				var got struct{ First, Again map[string]any }
				if err := json.Unmarshal([]byte(out), &got); err != nil {
					t.Fatalf("%v: %s", err, out)
				}
				if got.First["etag"] == nil || fmt.Sprint(got.First) != fmt.Sprint(got.Again) {
					t.Errorf("If-None-Match %q: the first Complete answered %v, the retry %v", ifNoneMatch, got.First, got.Again)
				}
			}
		})
	}
}

func ifNoneMatchName(v string) string {
	if v == "*" {
		return "-if-none-match"
	}
	return ""
}

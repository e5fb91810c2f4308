package e2e

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash"
	"hash/crc32"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/cespare/xxhash/v2"
	"github.com/zeebo/xxh3"
)

// User metadata must come back as it was stored: boto3 takes the key from
// the response header name after "x-amz-meta-", case included.
func TestFidelityMetadataKeepsItsCase(t *testing.T) {
	e := NewEnv(t)
	CreateBucket(t, e.Client(t, e.RW), "fidelity-meta")
	script, err := filepath.Abs(filepath.Join("scripts", "metadata_boto3.py"))
	if err != nil {
		t.Fatal(err)
	}
	out := runClient(t, e.RW, t.TempDir(), "python3", script, e.Endpoint, "fidelity-meta")
	var seen map[string]map[string]string
	if err := json.Unmarshal([]byte(out), &seen); err != nil {
		t.Fatalf("script output %q: %v", out, err)
	}
	want := map[string]map[string]string{
		"put-head":       {"foo": "bar", "two-words": "x"},
		"put-get":        {"foo": "bar", "two-words": "x"},
		"copy-head":      {"copied": "yes"},
		"multipart-head": {"foo": "multi"},
	}
	for name, meta := range want {
		got := seen[name]
		if len(got) != len(meta) {
			t.Errorf("%s: boto3 reports %v, want %v", name, got, meta)
			continue
		}
		for k, v := range meta {
			if got[k] != v {
				t.Errorf("%s: boto3 reports %v, want %v", name, got, meta)
			}
		}
	}
}

// checksumsForwarded makes s3cond pass verified checksum headers on, so the
// store checks what only it can: a completed object's checksum.
func checksumsForwarded(c *Config) { c.Backend.Checksums = "forward" }

// On CompleteMultipartUpload, x-amz-checksum-* is the whole object's
// checksum (full-object, or composite "<base64>-<parts>"). s3cond once
// checked it against the XML body and answered 400 where the store says 200.
func TestFidelityCompleteMultipartUploadWithObjectChecksum(t *testing.T) {
	e := NewEnv(t, WithConfig(checksumsForwarded))
	client := e.Client(t, e.RW)
	CreateBucket(t, client, "fidelity-complete")
	parts := [][]byte{PatternBytes(1, 5<<20), PatternBytes(2, 1<<20)}
	whole := bytes.Join(parts, nil)

	cases := []struct {
		name     string
		kind     types.ChecksumType
		checksum func(partCRCs [][]byte) string
		wantErr  bool
	}{
		{"full object", types.ChecksumTypeFullObject, func([][]byte) string { return crc32Of(whole) }, false},
		{"composite", types.ChecksumTypeComposite, func(crcs [][]byte) string {
			return crc32Of(bytes.Join(crcs, nil)) + "-2"
		}, false},
		{"full object, wrong", types.ChecksumTypeFullObject, func([][]byte) string { return crc32Of([]byte("other")) }, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			key := "obj-" + string(tc.kind)
			upload, err := client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("fidelity-complete"),
				Key: aws.String(key), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32, ChecksumType: tc.kind})
			if err != nil {
				t.Fatalf("CreateMultipartUpload: %v", err)
			}
			var completed []types.CompletedPart
			var partCRCs [][]byte
			for i, data := range parts {
				n := int32(i + 1)
				value := crc32Of(data)
				out, err := client.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("fidelity-complete"), Key: aws.String(key),
					UploadId: upload.UploadId, PartNumber: aws.Int32(n), Body: bytes.NewReader(data), ChecksumCRC32: aws.String(value)})
				if err != nil {
					t.Fatalf("UploadPart %d: %v", n, err)
				}
				raw, _ := base64.StdEncoding.DecodeString(value)
				partCRCs = append(partCRCs, raw)
				completed = append(completed, types.CompletedPart{PartNumber: aws.Int32(n), ETag: out.ETag, ChecksumCRC32: aws.String(value)})
			}
			_, err = client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("fidelity-complete"),
				Key: aws.String(key), UploadId: upload.UploadId, ChecksumCRC32: aws.String(tc.checksum(partCRCs)),
				ChecksumType: tc.kind, MultipartUpload: &types.CompletedMultipartUpload{Parts: completed}})
			if tc.wantErr {
				// The store checked the forwarded checksum: it was not dropped.
				if HTTPStatus(err) != http.StatusBadRequest {
					t.Fatalf("CompleteMultipartUpload with a wrong object checksum: %v, want the store's 400", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("CompleteMultipartUpload: %v", err)
			}
			if got := getBytes(t, ctx, client, "fidelity-complete", key); !bytes.Equal(got, whole) {
				t.Fatalf("object read back differs (%d bytes, want %d)", len(got), len(whole))
			}
		})
	}
}

// crc32Of is the base64 CRC32 value of x-amz-checksum-crc32.
func crc32Of(data []byte) string {
	return base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, crc32.ChecksumIEEE(data)))
}

func digestOf(h hash.Hash, data []byte) string {
	h.Write(data)
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// S3's newer checksum algorithms pass through s3cond, verified: a right
// value is stored (and forwarded: the store returns it), a wrong one is
// BadDigest and stores nothing.
func TestFidelityNewChecksumAlgorithms(t *testing.T) {
	e := NewEnv(t, WithConfig(checksumsForwarded))
	client := e.Client(t, e.RW)
	CreateBucket(t, client, "fidelity-algorithms")
	data := PatternBytes(3, 70<<10)
	cases := []struct {
		name string
		set  func(in *s3.PutObjectInput, value string)
		hash func() hash.Hash
	}{
		{"MD5", func(in *s3.PutObjectInput, v string) { in.ChecksumMD5 = aws.String(v) }, md5.New},
		{"SHA512", func(in *s3.PutObjectInput, v string) { in.ChecksumSHA512 = aws.String(v) }, sha512.New},
		{"XXHASH64", func(in *s3.PutObjectInput, v string) { in.ChecksumXXHASH64 = aws.String(v) }, func() hash.Hash { return xxhash.New() }},
		{"XXHASH3", func(in *s3.PutObjectInput, v string) { in.ChecksumXXHASH3 = aws.String(v) }, func() hash.Hash { return xxh3.New() }},
		{"XXHASH128", func(in *s3.PutObjectInput, v string) { in.ChecksumXXHASH128 = aws.String(v) }, func() hash.Hash { return xxh3.New128() }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			good := digestOf(tc.hash(), data)
			bad := digestOf(tc.hash(), []byte("other"))
			for _, value := range []string{good, bad} {
				in := &s3.PutObjectInput{Bucket: aws.String("fidelity-algorithms"), Key: aws.String(tc.name + value[:4]), Body: bytes.NewReader(data)}
				tc.set(in, value)
				_, err := client.PutObject(ctx, in)
				if value == bad {
					RequireS3Error(t, err, http.StatusBadRequest, "BadDigest")
					requireMissing(t, ctx, client, "fidelity-algorithms", tc.name+value[:4])
					continue
				}
				if err != nil {
					t.Fatalf("PutObject with %s: %v", tc.name, err)
				}
				head, err := client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("fidelity-algorithms"),
					Key: aws.String(tc.name + value[:4]), ChecksumMode: types.ChecksumModeEnabled})
				if err != nil {
					t.Fatal(err)
				}
				if got := storedChecksum(head); got != good {
					t.Fatalf("the store kept checksum %q, want %q", got, good)
				}
			}
		})
	}
}

// storedChecksum is whichever of the newer checksums HeadObject returned.
func storedChecksum(h *s3.HeadObjectOutput) string {
	for _, v := range []*string{h.ChecksumMD5, h.ChecksumSHA512, h.ChecksumXXHASH64, h.ChecksumXXHASH3, h.ChecksumXXHASH128} {
		if v != nil {
			return *v
		}
	}
	return ""
}

// An error s3cond answers before it reads a large body (here a checksum
// value that does not decode) must reach the client as that error, not as
// a connection the client sees reset while it is still sending — with and
// without Expect: 100-continue.
//
// s3cond-only: versitygw itself resets such connections before the client
// has read its answer (the direct run fails the same way), so here s3cond
// does better than the store it fronts.
func TestFidelityEarlyErrorOnALargeUploadPart(t *testing.T) {
	e := NewEnv(t)
	e.RequireProxy(t)
	client := e.Client(t, e.RW)
	CreateBucket(t, client, "fidelity-early")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	upload, err := client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("fidelity-early"), Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	data := PatternBytes(4, 32<<20)
	for name, threshold := range map[string]int64{"expect-continue": 0, "no-expect": -1} {
		t.Run(name, func(t *testing.T) {
			c := e.Client(t, e.RW, func(o *s3.Options) { o.ContinueHeaderThresholdBytes = threshold })
			// A reset loses the race against the answer only now and then.
			for range 5 {
				_, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("fidelity-early"), Key: aws.String("k"),
					UploadId: upload.UploadId, PartNumber: aws.Int32(1), Body: bytes.NewReader(data),
					ChecksumXXHASH64: aws.String("not a checksum")})
				RequireS3Error(t, err, http.StatusBadRequest, "InvalidRequest")
			}
		})
	}
}

// DeleteObject's size and modification-time conditions hold through s3cond
// (enforced under its lease): a mismatch is 412 and deletes nothing.
func TestFidelityConditionalDeleteBySizeAndTime(t *testing.T) {
	e := NewEnv(t)
	client := e.Client(t, e.RW)
	CreateBucket(t, client, "fidelity-delete")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	putBytes(t, ctx, client, "fidelity-delete", "k", []byte("four"))
	head, err := client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("fidelity-delete"), Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	del := func(in s3.DeleteObjectInput) error {
		in.Bucket, in.Key = aws.String("fidelity-delete"), aws.String("k")
		_, err := client.DeleteObject(ctx, &in)
		return err
	}
	RequireS3Error(t, del(s3.DeleteObjectInput{IfMatchSize: aws.Int64(5)}), http.StatusPreconditionFailed, "PreconditionFailed")
	RequireS3Error(t, del(s3.DeleteObjectInput{IfMatchLastModifiedTime: aws.Time(head.LastModified.Add(-time.Hour))}),
		http.StatusPreconditionFailed, "PreconditionFailed")
	if got := getBytes(t, ctx, client, "fidelity-delete", "k"); string(got) != "four" {
		t.Fatalf("object after refused deletes: %q", got)
	}
	if err := del(s3.DeleteObjectInput{IfMatchSize: aws.Int64(4), IfMatchLastModifiedTime: head.LastModified}); err != nil {
		t.Fatalf("delete whose conditions hold: %v", err)
	}
	requireMissing(t, ctx, client, "fidelity-delete", "k")
	if err := del(s3.DeleteObjectInput{IfMatchSize: aws.Int64(4)}); err != nil {
		t.Fatalf("size condition on a missing object: %v, want 204 as S3", err)
	}
}

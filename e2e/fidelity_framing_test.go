package e2e

import (
	"bytes"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"hash/crc64"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// crc64NVMEOf is the base64 CRC-64/NVME value of x-amz-checksum-crc64nvme
// (hash/crc64 with the polynomial's reflected form, as S3's SDKs compute it).
func crc64NVMEOf(data []byte) string {
	var raw [crc64.Size]byte
	binary.BigEndian.PutUint64(raw[:], crc64.Checksum(data, crc64.MakeTable(0x9a6c9329ac4bc9b5)))
	return base64.StdEncoding.EncodeToString(raw[:])
}

// s3cond frames a PutObject's body for the store (docs/spec.md §4); what the
// store records must still be what S3 records. An upload sent without a
// checksum gets S3's default CRC64NVME (s3cond's trailer once was CRC32, so
// the object had none), and a Content-Encoding is stored as sent (framing
// once made versitygw keep "aws-chunked,gzip").
//
// Checksums are forwarded, as by default: verify-only drops every
// x-amz-checksum-* header, x-amz-checksum-mode included.
func TestFidelityFramedPutStoresWhatS3Stores(t *testing.T) {
	e := NewEnv(t, WithConfig(checksumsForwarded))
	client := e.Client(t, e.RW, func(o *s3.Options) {
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
	})
	CreateBucket(t, client, "fidelity-framing")
	ctx := context.Background()
	body := PatternBytes(7, 100)

	put, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("fidelity-framing"), Key: aws.String("plain"), Body: bytes.NewReader(body)})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(put.ChecksumCRC64NVME); got != crc64NVMEOf(body) {
		t.Fatalf("PutObject answered CRC64NVME %q, want S3's default %q", got, crc64NVMEOf(body))
	}
	head, err := client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("fidelity-framing"), Key: aws.String("plain"), ChecksumMode: types.ChecksumModeEnabled})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(head.ChecksumCRC64NVME) != crc64NVMEOf(body) || head.ChecksumCRC32 != nil {
		t.Fatalf("stored checksums CRC64NVME %q CRC32 %q, want only CRC64NVME %q",
			aws.ToString(head.ChecksumCRC64NVME), aws.ToString(head.ChecksumCRC32), crc64NVMEOf(body))
	}

	if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("fidelity-framing"), Key: aws.String("gzipped"),
		Body: bytes.NewReader(body), ContentEncoding: aws.String("gzip")}); err != nil {
		t.Fatal(err)
	}
	head, err = client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("fidelity-framing"), Key: aws.String("gzipped")})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(head.ContentEncoding); got != "gzip" {
		t.Fatalf("stored Content-Encoding %q, want gzip", got)
	}
}

// S3's ChecksumAlgorithm has ten members; s3cond rewrites a Complete's part
// list and once dropped the five newer ones (SHA512, MD5, XXHASH64/3/128),
// so the store refused the Complete: the part's checksum was missing.
func TestFidelityCompleteKeepsSHA512PartChecksums(t *testing.T) {
	e := NewEnv(t, WithConfig(checksumsForwarded))
	client := e.Client(t, e.RW)
	CreateBucket(t, client, "fidelity-sha512")
	ctx := context.Background()
	bucket, key := aws.String("fidelity-sha512"), aws.String("obj")
	upload, err := client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: bucket, Key: key,
		ChecksumAlgorithm: types.ChecksumAlgorithmSha512, ChecksumType: types.ChecksumTypeComposite})
	if err != nil {
		t.Fatal(err)
	}
	data := PatternBytes(3, 1<<10)
	part, err := client.UploadPart(ctx, &s3.UploadPartInput{Bucket: bucket, Key: key, UploadId: upload.UploadId,
		PartNumber: aws.Int32(1), Body: bytes.NewReader(data), ChecksumAlgorithm: types.ChecksumAlgorithmSha512})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(part.ChecksumSHA512); got != digestOf(sha512.New(), data) {
		t.Fatalf("part SHA512 %q, want %q", got, digestOf(sha512.New(), data))
	}
	_, err = client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: bucket, Key: key, UploadId: upload.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{
			{PartNumber: aws.Int32(1), ETag: part.ETag, ChecksumSHA512: part.ChecksumSHA512}}}})
	if err != nil {
		t.Fatalf("Complete with the part's SHA512: %v", err)
	}
	if got := getBytes(t, ctx, client, "fidelity-sha512", "obj"); !bytes.Equal(got, data) {
		t.Fatalf("completed object: %d bytes, want %d", len(got), len(data))
	}
}

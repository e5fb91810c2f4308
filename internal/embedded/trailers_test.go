package embedded

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

const crc32OfTest = "2H9+DA==" // base64 CRC32 of "test"

// putTrailerStream sends what s3cond forwards for an upload whose checksum
// came as a trailer: an unsigned aws-chunked stream.
func putTrailerStream(t *testing.T, ctx context.Context, s *Server, key, stream string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, Endpoint+"/dev-bucket/"+key, strings.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Amz-Content-Sha256", "STREAMING-UNSIGNED-PAYLOAD-TRAILER")
	req.Header.Set("Content-Encoding", "aws-chunked")
	req.Header.Set("X-Amz-Decoded-Content-Length", "4")
	req.Header.Set("X-Amz-Trailer", "x-amz-checksum-crc32")
	resp, err := s.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func TestUploadWithTrailingChecksumIsStoredDecoded(t *testing.T) {
	ctx, s, c := startStoreWithClient(t)
	stream := "4\r\ntest\r\n0\r\nx-amz-checksum-crc32:" + crc32OfTest + "\r\n\r\n"
	if resp := putTrailerStream(t, ctx, s, "trailer", stream); resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT: %s", resp.Status)
	}
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: devBucket, Key: aws.String("trailer"), ChecksumMode: types.ChecksumModeEnabled})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Body.Close()
	body, err := io.ReadAll(out.Body)
	if err != nil || string(body) != "test" {
		t.Fatalf("stored %q (%v), want the decoded payload", body, err)
	}
	if got := aws.ToString(out.ChecksumCRC32); got != crc32OfTest {
		t.Errorf("ChecksumCRC32 = %q, want the trailer's %q", got, crc32OfTest)
	}
}

func TestUploadWithTrailingChecksumThatEndsEarlyStoresNothing(t *testing.T) {
	ctx, s, c := startStoreWithClient(t)
	for name, stream := range map[string]string{
		"no final chunk":   "4\r\ntest\r\n",
		"no trailer":       "4\r\ntest\r\n0\r\n",
		"a wrong checksum": "4\r\ntest\r\n0\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n",
	} {
		key := strings.ReplaceAll(name, " ", "-")
		if resp := putTrailerStream(t, ctx, s, key, stream); resp.StatusCode < 400 {
			t.Errorf("%s: PUT answered %s", name, resp.Status)
		}
		_, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: devBucket, Key: aws.String(key)})
		var apiErr smithy.APIError
		if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "NotFound" {
			t.Errorf("%s: HEAD after the refused upload: %v, want NotFound", name, err)
		}
	}
}

// An overwrite replaces the metadata too: a checksum of the old content
// must not be answered for the new one.
func TestOverwriteDropsTheOldObjectsChecksum(t *testing.T) {
	ctx, s, c := startStoreWithClient(t)
	put, err := http.NewRequestWithContext(ctx, http.MethodPut, Endpoint+"/dev-bucket/k", strings.NewReader("test"))
	if err != nil {
		t.Fatal(err)
	}
	put.Header.Set("x-amz-checksum-crc32", crc32OfTest)
	put.Header.Set("Content-Length", strconv.Itoa(len("test")))
	resp, err := s.HTTPClient().Do(put)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	putObject(t, ctx, c, "k", []byte("new content, no checksum"))

	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: devBucket, Key: aws.String("k"), ChecksumMode: types.ChecksumModeEnabled})
	if err != nil {
		t.Fatalf("GET with checksum validation: %v", err)
	}
	defer out.Body.Close()
	if _, err := io.ReadAll(out.Body); err != nil {
		t.Fatalf("read with checksum validation: %v", err)
	}
	if got := aws.ToString(out.ChecksumCRC32); got == crc32OfTest {
		t.Errorf("the overwritten object still carries the old content's CRC32 %s", got)
	}
}

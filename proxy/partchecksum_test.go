package proxy

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/s3cond/s3cond/internal/backendhttp"
)

// uploadsStore stands for a store's multipart uploads: ListParts reports
// each upload's checksum algorithm (uploadId "crc32", "sha256", "none"),
// or 404 NoSuchUpload; HeadBucket is 200; an UploadPart is stored (200).
// It counts the ListParts it answers.
func uploadsStore(t *testing.T) (*Backend, *atomic.Int32) {
	t.Helper()
	var listParts atomic.Int32
	algorithms := map[string]string{"crc32": "CRC32", "sha256": "SHA256", "none": "null"}
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		switch {
		case r.Method == http.MethodGet && q.Has("uploadId"):
			listParts.Add(1)
			algorithm, ok := algorithms[q.Get("uploadId")]
			if !ok {
				w.WriteHeader(http.StatusNotFound)
				_, _ = w.Write([]byte(`<Error><Code>NoSuchUpload</Code><Message>gone</Message></Error>`))
				return
			}
			_, _ = w.Write([]byte(`<ListPartsResult><Bucket>parts</Bucket><Key>k</Key><UploadId>` + q.Get("uploadId") +
				`</UploadId><ChecksumAlgorithm>` + algorithm + `</ChecksumAlgorithm><ChecksumType>COMPOSITE</ChecksumType></ListPartsResult>`))
		default:
			w.Header().Set("ETag", `"etag"`)
		}
	}))
	t.Cleanup(server.Close)
	u, _ := url.Parse(server.URL)
	return &Backend{
		Name: "uploads", Endpoint: u,
		Client: resigningClient(backendhttp.NewBackendTransport()),
	}, &listParts
}

// An UploadPart whose checksum algorithm is not its upload's gets S3's
// InvalidRequest (versitygw's UploadPart_checksum_algorithm_mistmatch_on_initialization_with_value),
// not the BadDigest of verifying its value; the store is asked only when
// the value failed.
func TestUploadPartChecksumAlgorithmMismatch(t *testing.T) {
	store, listParts := uploadsStore(t)
	f := newFixtureWith(t, fixtureOptions{bucketBackends: map[string]*Backend{"parts": store}})
	const emptySHA256 = "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
	wrongSHA256 := "uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek="
	uploadPart := func(uploadID, sha256 string) error {
		_, err := f.client.UploadPart(context.Background(), &s3.UploadPartInput{
			Bucket: aws.String("parts"), Key: aws.String("k"), UploadId: aws.String(uploadID),
			PartNumber: aws.Int32(1), ChecksumSHA256: aws.String(sha256), Body: strings.NewReader(""),
		})
		return err
	}
	for _, tc := range []struct{ upload, code, message string }{
		{"crc32", "InvalidRequest", "Checksum Type mismatch occurred, expected checksum Type: CRC32, actual checksum Type: SHA256"},
		{"sha256", "BadDigest", "The SHA256 you specified did not match the calculated checksum."},
		{"none", "BadDigest", "The SHA256 you specified did not match the calculated checksum."},
		{"gone", "NoSuchUpload", ""},
	} {
		err := uploadPart(tc.upload, wrongSHA256)
		var api smithy.APIError
		if !asAPIError(err, &api) || api.ErrorCode() != tc.code || (tc.message != "" && api.ErrorMessage() != tc.message) {
			t.Errorf("upload %s: %v, want %s %q", tc.upload, err, tc.code, tc.message)
		}
	}
	listParts.Store(0)
	if err := uploadPart("crc32", emptySHA256); err != nil {
		t.Errorf("a part whose checksum verifies reaches the store: %v", err)
	}
	if n := listParts.Load(); n != 0 {
		t.Errorf("a verified part cost %d ListParts, want none", n)
	}
}

func asAPIError(err error, target *smithy.APIError) bool {
	return errors.As(err, target)
}

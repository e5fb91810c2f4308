package testkit

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Region is the signing region of the requests tests sign.
const Region = "us-east-1"

// S3Signer signs as S3 clients do: the path is signed as sent, not escaped
// a second time (S3 is the one SigV4 service that does not double-escape).
// adjust changes further options, such as DisableHeaderHoisting for a
// presigned URL that keeps a signed header a header.
func S3Signer(adjust ...func(*v4.SignerOptions)) *v4.Signer {
	return v4.NewSigner(append([]func(*v4.SignerOptions){func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true }}, adjust...)...)
}

// Sign signs req for S3 in Region now, with payloadHash as its
// x-amz-content-sha256 (a hex SHA-256, UNSIGNED-PAYLOAD or a STREAMING-…
// value); the test fails if it cannot be signed.
func Sign(t testing.TB, req *http.Request, creds aws.Credentials, payloadHash string) {
	t.Helper()
	if err := SignAt(req, creds, payloadHash, Region, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// SignAsWritten signs req's headers as they are, for a request whose
// x-amz-content-sha256 is itself under test (sent twice, or not the
// payload's); payloadHash is what the signature takes the payload's hash
// to be.
func SignAsWritten(t testing.TB, req *http.Request, creds aws.Credentials, payloadHash string) {
	t.Helper()
	if err := S3Signer().SignHTTP(context.Background(), creds, req, payloadHash, "s3", Region, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// SignAt signs req for S3 in region at the given time, for callers that
// sign outside a test (harnesses) or need another region or clock.
func SignAt(req *http.Request, creds aws.Credentials, payloadHash, region string, at time.Time) error {
	req.Header.Set("X-Amz-Content-Sha256", payloadHash)
	return S3Signer().SignHTTP(context.Background(), creds, req, payloadHash, "s3", region, at)
}

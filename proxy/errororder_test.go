package proxy

import (
	"encoding/xml"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/s3cond/s3cond/internal/testkit"
)

// s3ErrorDocument reads the code of an S3 error answer.
func s3ErrorDocument(t *testing.T, resp *http.Response) (status int, code string) {
	t.Helper()
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Code string }
	if err := xml.Unmarshal(body, &doc); err != nil {
		t.Fatalf("status %d, not an S3 error document: %q", resp.StatusCode, body)
	}
	return resp.StatusCode, doc.Code
}

// S3 authenticates a request before it looks at what the request asks for:
// a request that s3cond would refuse as an operation it does not forward is
// still answered with the authentication error first.
func TestAuthenticationErrorsComeBeforeRoutingErrors(t *testing.T) {
	f := newFixture(t, false)
	send := func(req *http.Request) (int, string) {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return s3ErrorDocument(t, resp)
	}

	// A SigV2 presigned URL: its AWSAccessKeyId, Expires and Signature
	// parameters are unknown to the allow-list (501 before this order), but
	// S3 answers the signature version first.
	req, _ := http.NewRequest(http.MethodGet, f.proxyURL+"/"+bucketName+"/k?AWSAccessKeyId="+testKeyID+"&Expires=1&Signature=x", nil)
	if status, code := send(req); status != http.StatusBadRequest || code != "InvalidRequest" {
		t.Errorf("SigV2 presigned URL: %d %s, want 400 InvalidRequest", status, code)
	}

	// A wrongly signed request for a subresource s3cond does not forward:
	// the signature is what is wrong first.
	req, _ = http.NewRequest(http.MethodGet, f.proxyURL+"/"+bucketName+"?no-such-subresource", nil)
	hash := "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	creds := aws.Credentials{AccessKeyID: testKeyID, SecretAccessKey: "not-the-secret"}
	testkit.Sign(t, req, creds, hash)
	if status, code := send(req); status != http.StatusForbidden || code != "SignatureDoesNotMatch" {
		t.Errorf("bad signature on an unknown subresource: %d %s, want 403 SignatureDoesNotMatch", status, code)
	}

	// Correctly signed, the same request gets the routing answer.
	req, _ = http.NewRequest(http.MethodGet, f.proxyURL+"/"+bucketName+"?no-such-subresource", nil)
	creds.SecretAccessKey = testSecret
	testkit.Sign(t, req, creds, hash)
	if status, code := send(req); status != http.StatusNotImplemented || code != "NotImplemented" {
		t.Errorf("signed request for an unknown subresource: %d %s, want 501 NotImplemented", status, code)
	}
}

// S3 takes an aws-chunked body (STREAMING-*) only on PutObject and
// UploadPart. Through s3cond, which decodes such a body, any other operation
// would reach the store as a plain request; it is refused as S3 refuses it.
func TestStreamingPayloadOnlyOnUploads(t *testing.T) {
	f := newFixture(t, false)
	chunked := "5\r\nabcde\r\n0\r\n\r\n"
	send := func(path string) (int, string) {
		req, _ := http.NewRequest(http.MethodPut, f.proxyURL+path, strings.NewReader(chunked))
		req.Header.Set("X-Amz-Decoded-Content-Length", "5")
		req.Header.Set("Content-Encoding", "aws-chunked")
		creds := aws.Credentials{AccessKeyID: testKeyID, SecretAccessKey: testSecret}
		testkit.Sign(t, req, creds, "STREAMING-UNSIGNED-PAYLOAD-TRAILER")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == http.StatusOK {
			resp.Body.Close()
			return resp.StatusCode, ""
		}
		return s3ErrorDocument(t, resp)
	}
	if status, code := send("/" + bucketName + "?tagging"); status != http.StatusBadRequest || code != "InvalidRequest" {
		t.Errorf("PutBucketTagging with an aws-chunked body: %d %s, want 400 InvalidRequest", status, code)
	}
	if status, code := send("/" + bucketName + "/chunked-object"); status != http.StatusOK {
		t.Errorf("PutObject with an aws-chunked body: %d %s, want 200", status, code)
	}
}

package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/s3cond/s3cond/internal/testkit"
)

// Payload hash values of SigV4's payload modes.
const (
	UnsignedPayload              = "UNSIGNED-PAYLOAD"
	StreamingSignedPayload       = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
	StreamingSignedTrailer       = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
	StreamingUnsignedTrailer     = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
	emptySHA256                  = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	rawRequestTimeout            = 60 * time.Second
	maxRawResponseBodyBytesRead  = 1 << 20
	maxRawResponseBodyBytesShown = 2000
)

// RawRequest is an S3 request built by hand, for what SDKs refuse to send:
// bodies that do not match their signature, clocks that are off, no auth.
type RawRequest struct {
	Method   string
	Path     string // "/bucket/key", already escaped as it should go on the wire
	Query    url.Values
	Header   http.Header
	Body     []byte
	BodyFrom io.Reader // instead of Body, for streams; ContentLength must then be set
	// ContentLength overrides len(Body) (or is needed with BodyFrom).
	ContentLength int64
	// PayloadHash goes into x-amz-content-sha256 and the signature; empty
	// means the SHA-256 of Body.
	PayloadHash string
	// SignTime is when the request claims to be signed; zero means now.
	SignTime time.Time
	// Unsigned sends no Authorization at all.
	Unsigned bool
}

// RawResponse is a response read in full.
type RawResponse struct {
	Status int
	Header http.Header
	Body   []byte
}

// S3ErrorDoc is the XML error document S3 answers with.
type S3ErrorDoc struct {
	XMLName   xml.Name `xml:"Error"`
	Code      string   `xml:"Code"`
	Message   string   `xml:"Message"`
	Condition string   `xml:"Condition"`
	RequestID string   `xml:"RequestId"`
}

// Error parses the body as an S3 error document.
func (r *RawResponse) Error() (S3ErrorDoc, error) {
	var doc S3ErrorDoc
	if err := xml.Unmarshal(r.Body, &doc); err != nil {
		return doc, fmt.Errorf("response body is not an S3 error document: %w: %q", err, r.shortBody())
	}
	return doc, nil
}

func (r *RawResponse) shortBody() string {
	if len(r.Body) > maxRawResponseBodyBytesShown {
		return string(r.Body[:maxRawResponseBodyBytesShown]) + "…"
	}
	return string(r.Body)
}

// RequireError fails the test unless the response is the S3 error status/code,
// as an XML document with a request ID.
func (r *RawResponse) RequireError(t testing.TB, status int, code string) S3ErrorDoc {
	t.Helper()
	if r.Status != status {
		t.Fatalf("want status %d (%s), got %d: %s", status, code, r.Status, r.shortBody())
	}
	doc, err := r.Error()
	if err != nil {
		t.Fatal(err)
	}
	if doc.Code != code {
		t.Fatalf("want code %s, got %s (%s)", code, doc.Code, doc.Message)
	}
	return doc
}

// SignRequest signs r with SigV4 header auth for S3 at signTime, with
// payloadHash as x-amz-content-sha256, and returns the seed signature (what
// aws-chunked chunk signatures chain from).
func SignRequest(r *http.Request, cred Credentials, payloadHash string, signTime time.Time) (string, error) {
	creds := aws.Credentials{AccessKeyID: cred.AccessKey, SecretAccessKey: cred.Secret}
	if err := testkit.SignAt(r, creds, payloadHash, Region, signTime); err != nil {
		return "", fmt.Errorf("sign request: %w", err)
	}
	auth := r.Header.Get("Authorization")
	i := strings.LastIndex(auth, "Signature=")
	if i < 0 {
		return "", fmt.Errorf("no signature in %q", auth)
	}
	return auth[i+len("Signature="):], nil
}

// PresignURL returns a presigned URL for method on path, signed at signTime
// and valid for expires.
func PresignURL(endpoint, method, path string, cred Credentials, signTime time.Time, expires time.Duration) (string, error) {
	r, err := http.NewRequest(method, endpoint+path, nil)
	if err != nil {
		return "", fmt.Errorf("build presign request: %w", err)
	}
	q := r.URL.Query()
	q.Set("X-Amz-Expires", fmt.Sprint(int(expires.Seconds())))
	r.URL.RawQuery = q.Encode()
	creds := aws.Credentials{AccessKeyID: cred.AccessKey, SecretAccessKey: cred.Secret}
	signed, _, err := testkit.S3Signer().PresignHTTP(context.Background(), creds, r, UnsignedPayload, "s3", Region, signTime)
	if err != nil {
		return "", fmt.Errorf("presign: %w", err)
	}
	return signed, nil
}

// Do sends a raw request to endpoint signed with cred.
func Do(t testing.TB, endpoint string, cred Credentials, req RawRequest) *RawResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), rawRequestTimeout)
	defer cancel()
	resp, err := DoContext(ctx, endpoint, cred, req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// DoContext is Do returning errors instead of failing a test.
func DoContext(ctx context.Context, endpoint string, cred Credentials, req RawRequest) (*RawResponse, error) {
	u := endpoint + req.Path
	if len(req.Query) > 0 {
		u += "?" + req.Query.Encode()
	}
	body := req.BodyFrom
	length := req.ContentLength
	if body == nil {
		body = bytes.NewReader(req.Body)
		if length == 0 {
			length = int64(len(req.Body))
		}
	}
	r, err := http.NewRequestWithContext(ctx, req.Method, u, body)
	if err != nil {
		return nil, fmt.Errorf("build %s %s: %w", req.Method, u, err)
	}
	r.ContentLength = length
	if length == 0 {
		r.Body = http.NoBody
	}
	for k, vs := range req.Header {
		for _, v := range vs {
			r.Header.Add(k, v)
		}
	}
	if !req.Unsigned {
		hash := req.PayloadHash
		if hash == "" {
			sum := sha256.Sum256(req.Body)
			hash = hex.EncodeToString(sum[:])
		}
		signTime := req.SignTime
		if signTime.IsZero() {
			signTime = time.Now()
		}
		if _, err := SignRequest(r, cred, hash, signTime); err != nil {
			return nil, err
		}
	}
	return Send(r)
}

// Send sends a prepared request and reads the response.
func Send(r *http.Request) (*RawResponse, error) {
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", r.Method, r.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxRawResponseBodyBytesRead))
	if err != nil {
		return nil, fmt.Errorf("read response to %s %s: %w", r.Method, r.URL, err)
	}
	return &RawResponse{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

func httpBody(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }

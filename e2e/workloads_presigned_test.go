package e2e

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// appOrigin is the web page that uploads in TestPresignedUploadRecipe.
const appOrigin = "https://app.example"

// TestPresignedUploadRecipe tries docs/recipes/presigned-uploads.md as
// written, through s3cond on s3rver, the way a browser runs it: the app
// sets the bucket's CORS rules and presigns a PutObject with IfNoneMatch
// "*" (so If-None-Match is a signed header); the page's browser sends the
// CORS preflight (OPTIONS, unsigned), which s3cond forwards to the store
// and the store answers from the bucket's rules, then PUTs the bytes with
// that header and its Origin. A second upload to the same URL gets 412 and
// the first body stays; an upload that leaves the signed header out is
// refused; a preflight from another origin is refused by the store's rules.
func TestPresignedUploadRecipe(t *testing.T) {
	e := NewEnv(t, WithBackend(BackendS3rver))
	e.RequireProxy(t)
	client := e.Client(t, e.RW)
	CreateBucket(t, client, "uploads")
	_, err := client.PutBucketCors(t.Context(), &s3.PutBucketCorsInput{Bucket: aws.String("uploads"),
		CORSConfiguration: &types.CORSConfiguration{CORSRules: []types.CORSRule{{
			AllowedOrigins: []string{appOrigin},
			AllowedMethods: []string{http.MethodPut},
			AllowedHeaders: []string{"content-type", "if-none-match"},
			ExposeHeaders:  []string{"ETag"},
		}}}})
	if err != nil {
		t.Fatalf("PutBucketCors through s3cond: %v", err)
	}
	presigner := s3.NewPresignClient(client)
	req, err := presigner.PresignPutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String("uploads"),
		Key: aws.String("avatars/user-1.png"), IfNoneMatch: aws.String("*"), ContentType: aws.String("image/png")},
		s3.WithPresignExpires(15*time.Minute))
	if err != nil {
		t.Fatalf("presign: %v", err)
	}
	t.Logf("presigned %s %s, signed headers %v", req.Method, req.URL, req.SignedHeader)

	send := func(method, body string, header http.Header) *http.Response {
		t.Helper()
		r, err := http.NewRequestWithContext(t.Context(), method, req.URL, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body == "" {
			r.Body, r.ContentLength = http.NoBody, 0
		}
		r.Header = header
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	preflight := func(origin string) *http.Response {
		t.Helper()
		return send(http.MethodOptions, "", http.Header{"Origin": {origin}, "Access-Control-Request-Method": {"PUT"},
			"Access-Control-Request-Headers": {"content-type,if-none-match"}})
	}

	// The browser's preflight, to the presigned URL, query and all.
	resp := preflight(appOrigin)
	t.Logf("preflight: %s, Access-Control-Allow-Origin %q, -Methods %q, -Headers %q", resp.Status,
		resp.Header.Get("Access-Control-Allow-Origin"), resp.Header.Get("Access-Control-Allow-Methods"),
		resp.Header.Get("Access-Control-Allow-Headers"))
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") == "" ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "PUT") {
		t.Fatalf("preflight from the app's origin: %s %v, want 200 allowing PUT", resp.Status, resp.Header)
	}
	// The actual upload, as the browser sends it: the signed headers and Origin.
	signed := http.Header{"If-None-Match": {"*"}, "Content-Type": {"image/png"}, "Origin": {appOrigin}}
	resp = send(http.MethodPut, "first", signed)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("first upload: %s", resp.Status)
	}
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != appOrigin {
		t.Errorf("upload answered with Access-Control-Allow-Origin %q, want %q: the browser would hide the answer", got, appOrigin)
	}
	resp = send(http.MethodPut, "second", signed)
	if resp.StatusCode != http.StatusPreconditionFailed {
		t.Fatalf("second upload to the same URL: %s, want 412", resp.Status)
	}
	// s3cond's own 412 (its lease check; s3rver ignores If-None-Match)
	// carries the bucket's CORS headers, as the store's preflight answer
	// gives them (s3rver: "*", which a browser accepts for a request
	// without credentials), so the page can read it.
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != appOrigin && got != "*" {
		t.Errorf("412 answered with Access-Control-Allow-Origin %q, want %q or *: the page would see a failed fetch", got, appOrigin)
	}
	if resp := send(http.MethodPut, "without the header", http.Header{"Content-Type": {"image/png"}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("upload without the signed If-None-Match: %s, want 403 (SignatureDoesNotMatch)", resp.Status)
	}
	if got := getBytes(t, t.Context(), e.BackendClient(), "uploads", "avatars/user-1.png"); !bytes.Equal(got, []byte("first")) {
		t.Fatalf("the key holds %q, want the first upload's body", got)
	}

	// Another page: the bucket's rules do not allow it.
	if resp := preflight("https://elsewhere.example"); resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight from another origin: %s, Access-Control-Allow-Origin %q; want 403 without it",
			resp.Status, resp.Header.Get("Access-Control-Allow-Origin"))
	}
	// An OPTIONS that is no preflight is s3cond's 400, as S3's.
	if resp := send(http.MethodOptions, "", http.Header{}); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("OPTIONS without Origin: %s, want 400", resp.Status)
	}
}

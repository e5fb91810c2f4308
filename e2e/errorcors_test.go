package e2e

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestErrorAnswerCarriesTheBucketsCORSHeaders: a page whose presigned PUT
// s3cond refuses (here a signature that does not match) must be able to
// read the 403, so s3cond's own error answer carries the
// Access-Control-Allow-Origin that the bucket's CORS rule on versitygw gives
// the page's origin, and none for an origin the rules do not allow. Nothing
// is stored either way.
func TestErrorAnswerCarriesTheBucketsCORSHeaders(t *testing.T) {
	e := NewEnv(t)
	e.RequireProxy(t)
	client := e.Client(t, e.RW)
	CreateBucket(t, client, "cors-errors")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	// The rule is set on the store directly: what is under test is the
	// error path, not PutBucketCors through s3cond.
	_, err := e.BackendClient().PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: aws.String("cors-errors"),
		CORSConfiguration: &types.CORSConfiguration{CORSRules: []types.CORSRule{{
			AllowedOrigins: []string{appOrigin},
			AllowedMethods: []string{http.MethodPut},
			AllowedHeaders: []string{"*"},
			ExposeHeaders:  []string{"ETag"},
		}}}})
	if err != nil {
		t.Fatalf("PutBucketCors on versitygw: %v", err)
	}
	presigned, err := s3.NewPresignClient(client).PresignPutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String("cors-errors"), Key: aws.String("avatars/user-1.png")}, s3.WithPresignExpires(15*time.Minute))
	if err != nil {
		t.Fatalf("presign: %v", err)
	}
	tampered, err := url.Parse(presigned.URL)
	if err != nil {
		t.Fatal(err)
	}
	q := tampered.Query()
	q.Set("X-Amz-Signature", strings.Repeat("0", 64))
	tampered.RawQuery = q.Encode()

	put := func(origin string) *http.Response {
		t.Helper()
		r, err := http.NewRequestWithContext(ctx, http.MethodPut, tampered.String(), strings.NewReader("page upload"))
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Origin", origin)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatalf("PUT: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "<Code>SignatureDoesNotMatch</Code>") {
			t.Fatalf("tampered PUT from %s: %s %s, want 403 SignatureDoesNotMatch", origin, resp.Status, body)
		}
		return resp
	}

	resp := put(appOrigin)
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != appOrigin {
		t.Errorf("403 to %s: Access-Control-Allow-Origin %q, want %q (headers %v)", appOrigin, got, appOrigin, resp.Header)
	}
	if got := resp.Header.Get("Access-Control-Expose-Headers"); !strings.EqualFold(got, "ETag") {
		t.Errorf("403 to %s: Access-Control-Expose-Headers %q, want ETag", appOrigin, got)
	}
	resp = put("https://elsewhere.example")
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("403 to an origin without a rule: Access-Control-Allow-Origin %q, want none", got)
	}
	if _, err := e.BackendClient().HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("cors-errors"),
		Key: aws.String("avatars/user-1.png")}); err == nil {
		t.Error("a refused upload was stored")
	}
}

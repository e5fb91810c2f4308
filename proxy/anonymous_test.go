package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/sigv4"
)

// anonymousFixture is a proxy in front of gofakes3 whose anonymous grant
// covers the bucket "public" only; "public" and "private" each hold the
// object "k".
func anonymousFixture(t *testing.T, grant func(string) bool) string {
	t.Helper()
	backend, _ := fakeBackend(t, "default")
	front := httptest.NewServer(New(Options{Auth: sigv4.NewVerifier(staticKeys{}, "us-east-1"), Access: staticKeys{},
		Backend: backend, Log: zerolog.Nop(), AnonymousRead: grant}))
	t.Cleanup(front.Close)
	client := newClient(front.URL, testKeyID)
	for _, bucket := range []string{"public", "private"} {
		if _, err := client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"),
			Body: strings.NewReader("readable")}); err != nil {
			t.Fatal(err)
		}
	}
	return front.URL
}

func unsigned(t *testing.T, method, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestAnonymousGrantAllowsReadsOfItsBucketsOnly(t *testing.T) {
	endpoint := anonymousFixture(t, func(bucket string) bool { return bucket == "public" })
	allowed := []struct{ method, path, want string }{
		{"GET", "/public/k", "readable"},
		{"HEAD", "/public/k", ""},
		{"GET", "/public", "<Key>k</Key>"},
		{"GET", "/public?list-type=2", "<Key>k</Key>"},
	}
	for _, a := range allowed {
		if status, body := unsigned(t, a.method, endpoint+a.path); status != http.StatusOK || !strings.Contains(body, a.want) {
			t.Errorf("unsigned %s %s = %d %q, want 200 with %q", a.method, a.path, status, body, a.want)
		}
	}
	refused := []struct {
		method, path string
		status       int
		code         string
	}{
		{"GET", "/private/k", 403, "AccessDenied"},
		{"GET", "/private", 403, "AccessDenied"},
		{"PUT", "/public/k", 403, "AccessDenied"},
		{"DELETE", "/public/k", 403, "AccessDenied"},
		{"GET", "/public/k?acl", 403, "AccessDenied"},
		{"GET", "/public/k?tagging", 403, "AccessDenied"},
		{"GET", "/public?versions", 403, "AccessDenied"},
		{"GET", "/public?uploads", 403, "AccessDenied"},
		{"GET", "/", 403, "AccessDenied"},
		{"GET", "/public/k?response-content-type=text%2Fhtml", 400, "InvalidRequest"},
	}
	for _, r := range refused {
		status, body := unsigned(t, r.method, endpoint+r.path)
		if status != r.status || !strings.Contains(body, "<Code>"+r.code+"</Code>") {
			t.Errorf("unsigned %s %s = %d %q, want %d %s", r.method, r.path, status, body, r.status, r.code)
		}
	}
	if status, body := unsigned(t, "GET", endpoint+"/public/k"); status != 200 || body != "readable" {
		t.Errorf("the refused writes changed public/k: %d %q", status, body)
	}
}

func TestAnonymousRequestsAreRefusedByDefault(t *testing.T) {
	endpoint := anonymousFixture(t, nil)
	for _, path := range []string{"/public/k", "/public"} {
		if status, body := unsigned(t, "GET", endpoint+path); status != 403 || !strings.Contains(body, "<Code>AccessDenied</Code>") {
			t.Errorf("unsigned GET %s without a grant = %d %q, want 403 AccessDenied", path, status, body)
		}
	}
}

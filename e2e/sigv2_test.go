package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/s3cond/s3cond/internal/testservers"
)

// TestSignatureV2 runs the legacy signature with the tools that still send
// it, through s3cond on versitygw and on s3rver (a store without SigV2 or
// conditional writes): aws-cli v1's `aws s3 presign` (SigV2 by
// default, with no s3v4 setting: clientEnv points AWS_CONFIG_FILE at
// /dev/null) and boto3 with signature_version='s3'. On, they work with the
// key's grants and conditional writes; off (the default), the same URL is
// S3's 400 InvalidRequest.
func TestSignatureV2(t *testing.T) {
	if TargetMode() == ModeDirect {
		t.Skip("auth.signature_v2 is s3cond's setting")
	}
	testservers.Require(t, "aws")
	testservers.Require(t, "boto3")
	for _, backend := range []BackendKind{BackendVersityGW, BackendS3rver} {
		t.Run(string(backend), func(t *testing.T) { testSignatureV2(t, backend) })
	}
}

func testSignatureV2(t *testing.T, backend BackendKind) {
	on := NewEnv(t, WithBackend(backend), WithProcessEnv("S3COND_AUTH_SIGNATURE_V2=true"))
	off := NewEnv(t, WithBackend(backend))
	for _, e := range []*Env{on, off} {
		c := e.Client(t, e.RW)
		CreateBucket(t, c, "legacy-v2")
		putBytes(t, t.Context(), c, "legacy-v2", "report.txt", []byte("presigned by aws-cli v1"))
	}

	t.Run("aws s3 presign", func(t *testing.T) {
		url := presignV2(t, on, on.RW, "s3://legacy-v2/report.txt")
		if status, body := httpGet(t, url); status != http.StatusOK || body != "presigned by aws-cli v1" {
			t.Fatalf("GET of the SigV2 URL with signature_v2 on: %d %q", status, body)
		}
		url = presignV2(t, off, off.RW, "s3://legacy-v2/report.txt")
		if status, body := httpGet(t, url); status != http.StatusBadRequest || !strings.Contains(body, "<Code>InvalidRequest</Code>") ||
			!strings.Contains(body, "AWS4-HMAC-SHA256") {
			t.Fatalf("GET of the SigV2 URL with signature_v2 off: %d %q", status, body)
		}
		// The Granted key may use granted-* buckets only, under SigV2 too.
		url = presignV2(t, on, on.Granted, "s3://legacy-v2/report.txt")
		if status, body := httpGet(t, url); status != http.StatusForbidden || !strings.Contains(body, "<Code>AccessDenied</Code>") {
			t.Fatalf("GET of a SigV2 URL of a key not granted the bucket: %d %q", status, body)
		}
	})

	t.Run("boto3 signature_version s3", func(t *testing.T) {
		script, err := filepath.Abs(filepath.Join("scripts", "sigv2_boto3.py"))
		if err != nil {
			t.Fatal(err)
		}
		type answer struct {
			Status int    `json:"status"`
			Code   string `json:"code"`
			Body   string `json:"body"`
		}
		var got map[string]answer
		out := runClient(t, on.RW, t.TempDir(), "python3", script, on.Endpoint, "legacy-v2", "boto3.txt")
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("boto3 output %q: %v", out, err)
		}
		want := map[string]answer{
			"put":          {Status: 200},
			"get":          {Status: 200, Body: "signed with sigv2"},
			"create":       {Status: 200},
			"create_again": {Status: 412, Code: "PreconditionFailed"},
			"get_created":  {Status: 200, Body: "first"},
		}
		for call, w := range want {
			if got[call] != w {
				t.Errorf("%s: %+v, want %+v", call, got[call], w)
			}
		}
		// Off, the same script is refused: boto3 did sign with SigV2.
		out = runClient(t, off.RW, t.TempDir(), "python3", script, off.Endpoint, "legacy-v2", "boto3.txt")
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("boto3 output %q: %v", out, err)
		}
		if w := (answer{Status: 400, Code: "InvalidRequest"}); got["put"] != w {
			t.Errorf("put with signature_v2 off: %+v, want %+v", got["put"], w)
		}
	})
}

// presignV2 runs `aws s3 presign` and checks that it signed with SigV2.
func presignV2(t *testing.T, e *Env, cred Credentials, object string) string {
	t.Helper()
	url := strings.TrimSpace(runClient(t, cred, t.TempDir(), "aws", "--endpoint-url", e.Endpoint, "s3", "presign", object))
	if !strings.Contains(url, "AWSAccessKeyId=") || !strings.Contains(url, "Signature=") || strings.Contains(url, "X-Amz-Algorithm") {
		t.Fatalf("aws s3 presign did not sign with SigV2: %s", url)
	}
	return url
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

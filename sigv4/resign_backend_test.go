package sigv4

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/s3cond/s3cond/internal/testservers"
)

// TestResignerAgainstVersityGW checks the resigner's signatures with a real
// backend that verifies SigV4 itself, including keys and queries whose
// encodings differ between clients.
func TestResignerAgainstVersityGW(t *testing.T) {
	gw := testservers.StartVersityGW(t)
	client := &http.Client{Transport: NewResigner(http.DefaultTransport,
		credentials.NewStaticCredentialsProvider(gw.AccessKey, gw.Secret, ""), "us-east-1")}

	do := func(method, key, rawQuery, contentSHA256, body string) (int, string) {
		t.Helper()
		var reader io.Reader
		if body != "" {
			reader = strings.NewReader(body)
		}
		r := outboundRequest(t, gw.Endpoint, method, key, rawQuery, reader, int64(len(body)))
		r.URL.Path = strings.TrimSuffix(r.URL.Path, "/") // key "" addresses the bucket
		if contentSHA256 != "" {
			r.Header.Set(headerContentSHA256, contentSHA256)
		}
		resp, err := client.Do(r)
		if err != nil {
			t.Fatalf("%s %s: %v", method, key, err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}

	if status, body := do("PUT", "", "", "", ""); status != http.StatusOK {
		t.Fatalf("create bucket: %d %s", status, body)
	}
	keys := []string{
		"plain.txt",
		"dir/with space/and  two",
		"ünïcødé/日本語.bin",
		"a+b=c&d",
		"literal%2Fpercent%20",
		"!$'()*,;:@~-_.",
	}
	for i, key := range keys {
		payload := "object " + key
		hash := unsignedPayload
		if i%2 == 0 {
			hash = sha256Hex([]byte(payload))
		}
		if status, body := do("PUT", key, "", hash, payload); status != http.StatusOK {
			t.Fatalf("PUT %q (%s): %d %s", key, hash, status, body)
		}
		status, body := do("GET", key, "response-content-type=text%2fplain&response-cache-control=no+cache", "", "")
		if status != http.StatusOK || body != payload {
			t.Fatalf("GET %q: %d %q", key, status, body)
		}
	}
	status, body := do("GET", "", "list-type=2&prefix=dir%2Fwith+space&delimiter=%2F&encoding-type=url", "", "")
	if status != http.StatusOK || !strings.Contains(body, "<Prefix>dir") {
		t.Fatalf("ListObjectsV2: %d %s", status, body)
	}
}

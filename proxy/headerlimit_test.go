package proxy

import (
	"bufio"
	"encoding/xml"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/s3cond/s3cond/internal/testkit"
)

// headerSectionSize counts the field lines as they were on the wire.
func TestHeaderSectionSizeIsTheWireSize(t *testing.T) {
	fields := "Host: example.com:9000\r\nX-Amz-Date: 20260314T150926Z\r\nx-amz-meta-a: 1\r\nX-Amz-Meta-A: 22\r\nContent-Length: 0\r\n"
	r, err := http.ReadRequest(bufio.NewReader(strings.NewReader("PUT /b/k HTTP/1.1\r\n" + fields + "\r\n")))
	if err != nil {
		t.Fatal(err)
	}
	if got := headerSectionSize(r); got != len(fields) {
		t.Fatalf("headerSectionSize = %d, want %d", got, len(fields))
	}
}

// A header section over S3's 8 KiB is 400 RequestHeaderSectionTooLarge
// (MaxSizeAllowed 8192) before anything else: before the signature, and
// without reaching the backend (not even for a browser's CORS headers). Just under the limit, the request is served.
func TestHeaderSectionOverS3Limit(t *testing.T) {
	var backendRequests atomic.Int32
	f := newFixtureWith(t, fixtureOptions{backendHook: func(*http.Request) { backendRequests.Add(1) }})
	send := func(pad int, sign bool) (int, string, string) {
		req, err := http.NewRequest(http.MethodPut, f.proxyURL+"/"+bucketName+"/big-headers", strings.NewReader("x"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Custom-Header", strings.Repeat("d", pad))
		req.Header.Set("Origin", "https://page.example") // no CORS lookup either
		if sign {
			creds := aws.Credentials{AccessKeyID: testKeyID, SecretAccessKey: testSecret}
			testkit.Sign(t, req, creds, "UNSIGNED-PAYLOAD")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var doc struct{ Code, MaxSizeAllowed string }
		_ = xml.Unmarshal(body, &doc)
		return resp.StatusCode, doc.Code, doc.MaxSizeAllowed
	}
	before := backendRequests.Load()
	for _, sign := range []bool{true, false} {
		status, code, limit := send(8<<10, sign)
		if status != http.StatusBadRequest || code != "RequestHeaderSectionTooLarge" || limit != "8192" {
			t.Errorf("8 KiB header value (signed %v): %d %s MaxSizeAllowed %q, want 400 RequestHeaderSectionTooLarge 8192", sign, status, code, limit)
		}
	}
	if n := backendRequests.Load() - before; n != 0 {
		t.Fatalf("the backend received %d requests", n)
	}
	if status, code, _ := send(6<<10, true); status != http.StatusOK {
		t.Fatalf("6 KiB header value: %d %s, want 200", status, code)
	}
}

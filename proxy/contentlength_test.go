package proxy

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/s3cond/s3cond/dynamolease/leasetest"
)

// A conditional PUT sent chunked, with no Content-Length and no
// x-amz-decoded-content-length, is answered 411 MissingContentLength as on
// S3, before any lease is taken: the key is not left locked.
func TestUploadWithoutLengthIs411BeforeAnyLease(t *testing.T) {
	table := leasetest.New(leasetest.Hooks{})
	f := newFixtureWith(t, fixtureOptions{leaseTable: table})
	body := []byte("a body of unknown length")
	req, err := http.NewRequest(http.MethodPut, f.proxyURL+"/"+bucketName+"/unsized", io.MultiReader(bytes.NewReader(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = -1 // sent with Transfer-Encoding: chunked
	req.Header.Set("If-None-Match", "*")
	signWithTestKey(t, req, body)
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusLengthRequired || !strings.Contains(string(answer), "<Code>MissingContentLength</Code>") {
		t.Fatalf("status %d, body %s; want 411 MissingContentLength", resp.StatusCode, answer)
	}
	if row := table.Row(t, bucketName+"/unsized", "*"); row != nil {
		t.Fatalf("lease row %+v: want none", row)
	}
}

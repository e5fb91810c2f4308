package app

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/s3cond/s3cond/proxy"
)

// The server bounds a request's header block at proxy.MaxHeaderBytes
// (net/http's own 431 beyond it), above S3's 8 KiB, so a section S3 would
// refuse still gets S3's XML answer.
func TestServerHeaderLimits(t *testing.T) {
	a := build(t, devConfig(t))
	url, _, _ := startServing(t, a, time.Second)
	get := func(pad int) (int, string) {
		return do(t, signed(t, http.MethodGet, url+"/some-bucket/k", nil, http.Header{"X-Custom-Header": {strings.Repeat("d", pad)}}))
	}
	if status, body := get(10 << 10); status != http.StatusBadRequest || !strings.Contains(body, "<Code>RequestHeaderSectionTooLarge</Code>") {
		t.Errorf("10 KiB header: %d %q, want S3's 400 RequestHeaderSectionTooLarge", status, body)
	}
	if status, _ := get(proxy.MaxHeaderBytes + 8<<10); status != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("header block over MaxHeaderBytes: %d, want 431", status)
	}
}

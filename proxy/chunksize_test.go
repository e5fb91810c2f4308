package proxy

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/internal/testkit"
)

// A conditional aws-chunked upload with a chunk under 8 KiB before its last
// gets S3's 400 InvalidChunkSizeError: nothing is stored, and its lease is
// released at once, so the next create of the key does not wait.
func TestSmallChunkRefusedAndLeaseReleased(t *testing.T) {
	f := newFixture(t, false)
	host := wireHost(f.proxyURL)
	body, decoded := testkit.UnsignedChunks(10_000, 100, 9_000)
	r := &wireRequest{method: http.MethodPut, target: "/" + bucketName + "/small-chunks", body: body}
	r.add("Content-Length", strconv.Itoa(len(body)))
	r.add("Content-Encoding", "aws-chunked")
	r.add("X-Amz-Decoded-Content-Length", strconv.Itoa(decoded))
	r.add("If-None-Match", "*")
	r.sign(t, host, "STREAMING-UNSIGNED-PAYLOAD-TRAILER")
	sendWire(t, f.proxyURL, r.bytes(host), false).wantS3Error(t, http.StatusBadRequest, "InvalidChunkSizeError")
	f.wantNotStored(t, "small-chunks")
	start := time.Now()
	if _, err := f.put(t, "small-chunks", "good", func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") }); err != nil {
		t.Fatalf("create after the refused upload: %v", err)
	}
	if waited := time.Since(start); waited > 2*time.Second {
		t.Fatalf("create waited %s: the refused upload's lease was left held", waited)
	}
}

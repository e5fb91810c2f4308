package proxy

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestConnectionHeaderCannotRemoveSignedHeaders adds an unsigned
// Connection header, after signing, that names signed headers. A proxy
// drops the headers its Connection header names (RFC 9110 §7.6.1), so
// s3cond once verified the request with them and forwarded it without:
// an object stored without the metadata its presigned URL mandated, a
// copy without its failing copy-source condition. Such a request is
// refused now, and nothing is stored.
func TestConnectionHeaderCannotRemoveSignedHeaders(t *testing.T) {
	f := newFixture(t, false)
	host := wireHost(f.proxyURL)
	signed := [][2]string{
		{"Content-Disposition", "attachment"}, {"X-Amz-Meta-Owner", "alice"}, {"X-Amz-Tagging", "team=a"},
	}
	for _, named := range []string{
		"Content-Disposition, x-amz-meta-owner, x-amz-tagging",
		"x-amz-meta-owner", "keep-alive, X-AMZ-META-OWNER", "Content-Disposition", "X-Amz-Tagging",
		"Host", "Authorization", "X-Amz-Content-Sha256", "X-Amz-Date", "Content-Length", "Content-Type",
		"If-None-Match", "Expect", "X-Amz-Decoded-Content-Length",
	} {
		t.Run(named, func(t *testing.T) {
			key := "connection-" + strconv.Itoa(len(named)) + "-" + named[:4]
			r := signedWirePut(t, host, key, []byte("signed body"), signed...)
			r.add("Connection", named)
			ex := sendWire(t, f.proxyURL, r.bytes(host), false)
			ex.wantS3Error(t, http.StatusBadRequest, "InvalidArgument")
			f.wantNotStored(t, key)
		})
	}

	t.Run("a copy whose failing source condition is named", func(t *testing.T) {
		ctx := context.Background()
		if _, err := f.put(t, "copy-src", "source", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := f.put(t, "copy-dst", "destination", nil); err != nil {
			t.Fatal(err)
		}
		r := &wireRequest{method: http.MethodPut, target: "/" + bucketName + "/copy-dst"}
		r.add("Content-Length", "0")
		r.add("X-Amz-Copy-Source", "/"+bucketName+"/copy-src")
		r.add("X-Amz-Copy-Source-If-Match", `"00000000000000000000000000000000"`)
		r.sign(t, host, payloadHashOf(nil))
		r.add("Connection", "x-amz-copy-source, x-amz-copy-source-if-match")
		sendWire(t, f.proxyURL, r.bytes(host), false).wantS3Error(t, http.StatusBadRequest, "InvalidArgument")
		out, err := f.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucketName), Key: aws.String("copy-dst")})
		if err != nil {
			t.Fatal(err)
		}
		defer out.Body.Close()
		if aws.ToInt64(out.ContentLength) != int64(len("destination")) {
			t.Fatalf("copy-dst was overwritten: %d bytes", aws.ToInt64(out.ContentLength))
		}
	})
}

// TestConnectionHeaderHopByHopStillAllowed: connection options and
// hop-by-hop header names are what a Connection header is for; such
// requests are served, with every signed header forwarded.
func TestConnectionHeaderHopByHopStillAllowed(t *testing.T) {
	f := newFixture(t, false)
	host := wireHost(f.proxyURL)
	for i, named := range []string{"keep-alive", "Keep-Alive, TE", "close", "Upgrade, HTTP2-Settings"} {
		t.Run(named, func(t *testing.T) {
			key := "hop-" + strconv.Itoa(i)
			r := signedWirePut(t, host, key, []byte("body"), [2]string{"X-Amz-Meta-Owner", "alice"})
			r.add("Connection", named)
			if ex := sendWire(t, f.proxyURL, r.bytes(host), false); ex.status != http.StatusOK {
				t.Fatalf("got %d %s", ex.status, ex.body)
			}
			head, err := f.client.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(bucketName), Key: aws.String(key)})
			if err != nil || head.Metadata["owner"] != "alice" {
				t.Fatalf("stored %v, %v; want owner=alice", head, err)
			}
		})
	}
}

func TestCheckConnectionHeader(t *testing.T) {
	for value, ok := range map[string]bool{
		"": true, "close": true, "Keep-Alive": true, " keep-alive , te ,": true, "Upgrade, HTTP2-Settings": true,
		"X-Private": false, "x-amz-meta-a": false, "content-md5": false, "range": false, "if-match": false,
		"close, host": false,
	} {
		h := http.Header{}
		if value != "" {
			h.Set("Connection", value)
		}
		if err := checkConnectionHeader(h); (err == nil) != ok {
			t.Errorf("Connection: %q: %v, want allowed=%v", value, err, ok)
		}
	}
}

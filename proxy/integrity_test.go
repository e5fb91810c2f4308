package proxy

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/s3cond/s3cond/internal/testkit"
)

// storeRequest is what the backend got: method, query, integrity headers
// and whether the Content-MD5 is of the body it received.
type storeRequest struct {
	method, query, contentMD5 string
	checksumHeaders           []string
	md5OfBody                 bool
}

// With checksums verify-only (the fixture's backend: ForwardChecksums
// false) a small configuration body keeps an integrity header: the
// client's CRC32 is verified and dropped, and the store gets a Content-MD5
// of the verified body. Uploads are not buffered for one.
func TestVerifyOnlyConfigurationBodyGetsContentMD5(t *testing.T) {
	var mu sync.Mutex
	var got []storeRequest
	f := newFixtureWith(t, fixtureOptions{backendHook: func(r *http.Request) {
		if r.Method != http.MethodPut {
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		sum := md5.Sum(body)
		req := storeRequest{method: r.Method, query: r.URL.RawQuery, contentMD5: r.Header.Get("Content-Md5")}
		req.md5OfBody = req.contentMD5 == base64.StdEncoding.EncodeToString(sum[:])
		for name := range r.Header {
			if isChecksumHeader(name) {
				req.checksumHeaders = append(req.checksumHeaders, name)
			}
		}
		mu.Lock()
		got = append(got, req)
		mu.Unlock()
	}})
	ctx := context.Background()
	_, _ = f.client.PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: aws.String(bucketName), CORSConfiguration: &s3types.CORSConfiguration{
		CORSRules: []s3types.CORSRule{{AllowedMethods: []string{"GET"}, AllowedOrigins: []string{"*"}}},
	}, ChecksumAlgorithm: s3types.ChecksumAlgorithmCrc32})
	if _, err := f.put(t, "object", "body", func(in *s3.PutObjectInput) { in.ChecksumAlgorithm = s3types.ChecksumAlgorithmCrc32 }); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var cors, object *storeRequest
	for i := range got {
		switch {
		case strings.Contains(got[i].query, "cors"):
			cors = &got[i]
		case got[i].query == "":
			object = &got[i]
		}
	}
	if cors == nil || object == nil {
		t.Fatalf("the store got %+v, want a PutBucketCors and a PutObject", got)
	}
	if !cors.md5OfBody || len(cors.checksumHeaders) != 0 {
		t.Errorf("PutBucketCors reached the store with Content-MD5 %q (of its body: %v) and checksum headers %v, want s3cond's Content-MD5 only",
			cors.contentMD5, cors.md5OfBody, cors.checksumHeaders)
	}
	if object.contentMD5 != "" || len(object.checksumHeaders) != 0 {
		t.Errorf("PutObject reached the store with Content-MD5 %q and %v, want neither (verify-only)", object.contentMD5, object.checksumHeaders)
	}
}

// A configuration body whose checksum does not verify is refused, and the
// store gets nothing.
func TestVerifyOnlyConfigurationBodyIsVerifiedFirst(t *testing.T) {
	var corsPuts atomic.Int32
	f := newFixtureWith(t, fixtureOptions{backendHook: func(r *http.Request) {
		if r.Method == http.MethodPut && r.URL.Query().Has("cors") {
			corsPuts.Add(1)
		}
	}})
	body := []byte(`<CORSConfiguration><CORSRule><AllowedMethod>GET</AllowedMethod><AllowedOrigin>*</AllowedOrigin></CORSRule></CORSConfiguration>`)
	req, _ := http.NewRequest(http.MethodPut, f.proxyURL+"/"+bucketName+"?cors", bytes.NewReader(body))
	req.Header.Set("X-Amz-Checksum-Crc32", "AAAAAA==")
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	creds := aws.Credentials{AccessKeyID: testKeyID, SecretAccessKey: testSecret}
	testkit.Sign(t, req, creds, hash)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if status, code := s3ErrorDocument(t, resp); status != http.StatusBadRequest || code != "BadDigest" {
		t.Fatalf("a wrong CRC32: %d %s, want 400 BadDigest", status, code)
	}
	if n := corsPuts.Load(); n != 0 {
		t.Fatalf("the store got %d PutBucketCors with a body that did not verify", n)
	}
}

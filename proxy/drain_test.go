package proxy

import (
	"bytes"
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// A large upload refused on its headers: the Go SDK sends Expect:
// 100-continue and then the body without waiting, so s3cond answers while
// the body is still arriving. Each attempt must end in the S3 error, never
// in a reset connection ("request send failed"); without draining, about
// one attempt in four did on loopback.
func TestEarlyErrorReachesAClientStillSending(t *testing.T) {
	f := newFixture(t, false)
	data := bytes.Repeat([]byte("x"), 16<<20)
	for i := range 12 {
		_, err := f.client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucketName), Key: aws.String("k"),
			Body: bytes.NewReader(data), ChecksumXXHASH64: aws.String("not a checksum")},
			func(o *s3.Options) { o.RetryMaxAttempts = 1 })
		if code := errorCode(err); code != "InvalidRequest" {
			t.Fatalf("attempt %d: %v, want the 400 InvalidRequest", i, err)
		}
	}
}

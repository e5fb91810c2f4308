package probe

import (
	"context"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/internal/testservers"
)

// versitygw v1.8.0 reads aws-chunked uploads and refuses an unfinished
// one: the framing check says native. Given no bucket (the default
// configuration sets no probe_bucket) it checks in a scratch bucket it
// then deletes, whether or not the store has buckets, leaving nothing
// behind either way.
func TestFramingIsNativeOnVersityGW(t *testing.T) {
	gw := testservers.StartVersityGW(t)
	creds := credentials.NewStaticCredentialsProvider(gw.AccessKey, gw.Secret, "")
	client := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(gw.Endpoint), UsePathStyle: true, Credentials: creds})
	if r := Framing(context.Background(), Options{Endpoint: gw.Endpoint, Credentials: creds, PathStyle: true}); r.Verdict != Native {
		t.Fatalf("on a store without buckets: %s (%s), want native", r.Verdict, r.Detail)
	}
	if buckets, err := client.ListBuckets(context.Background(), &s3.ListBucketsInput{}); err != nil || len(buckets.Buckets) != 0 {
		t.Fatalf("the check left %d buckets (%v)", len(buckets.Buckets), err)
	}
	if _, err := client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String("framing")}); err != nil {
		t.Fatal(err)
	}
	r := Framing(context.Background(), Options{Endpoint: gw.Endpoint, Credentials: creds, PathStyle: true})
	if r.Verdict != Native {
		t.Fatalf("%s (%s), want native", r.Verdict, r.Detail)
	}
	if buckets, err := client.ListBuckets(context.Background(), &s3.ListBucketsInput{}); err != nil || len(buckets.Buckets) != 1 {
		t.Fatalf("the check left %d buckets (%v), want only the store's own", len(buckets.Buckets), err)
	}
	out, err := client.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String("framing")})
	if err != nil || len(out.Contents) != 0 {
		t.Fatalf("the check left %d objects (%v)", len(out.Contents), err)
	}
}

// gofakes3 (the faulty stores' base, and the embedded store) does not
// decode aws-chunked: it keeps the framing as the object's bytes. Framing
// such a store would corrupt every upload, so the check says ignored.
func TestFramingIsIgnoredWhereTheStoreKeepsTheFraming(t *testing.T) {
	r := Framing(context.Background(), startFake(t, func(inner http.Handler) http.Handler { return inner }))
	if r.Verdict != Ignored {
		t.Fatalf("%s (%s), want ignored", r.Verdict, r.Detail)
	}
}

// s3rver 3.7 keeps what it got of a cut-off upload, or the framing: never native.
func TestFramingIsNotNativeOnS3rver(t *testing.T) {
	sr := testservers.StartS3rver(t, "framing")
	r := Framing(context.Background(), Options{Endpoint: sr.Endpoint, AccessKeyID: sr.AccessKey, SecretKey: sr.Secret, PathStyle: true, Bucket: "framing"})
	if r.Verdict == Native {
		t.Fatalf("%s (%s), want anything but native", r.Verdict, r.Detail)
	}
	t.Logf("s3rver: %s (%s)", r.Verdict, r.Detail)
}

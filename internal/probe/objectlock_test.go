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

// versitygw v1.8.0 keeps legal holds: the object-lock check says native and
// removes its bucket; gofakes3 keeps no hold.
func TestObjectLockCheck(t *testing.T) {
	gw := testservers.StartVersityGW(t)
	creds := credentials.NewStaticCredentialsProvider(gw.AccessKey, gw.Secret, "")
	if r := CheckObjectLock(context.Background(), Options{Endpoint: gw.Endpoint, Credentials: creds, PathStyle: true}); r.Verdict != Native {
		t.Fatalf("versitygw: %s (%s), want native", r.Verdict, r.Detail)
	}
	client := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(gw.Endpoint), UsePathStyle: true, Credentials: creds})
	if buckets, err := client.ListBuckets(context.Background(), &s3.ListBucketsInput{}); err != nil || len(buckets.Buckets) != 0 {
		t.Fatalf("the check left %d buckets (%v)", len(buckets.Buckets), err)
	}
	fake := startFake(t, func(inner http.Handler) http.Handler { return inner })
	fake.Bucket = ""
	if r := CheckObjectLock(context.Background(), fake); r.Verdict == Native {
		t.Fatalf("gofakes3: %s (%s), want anything but native", r.Verdict, r.Detail)
	}
}

// versitygw v1.8.0 checks both multipart conditions; gofakes3 neither.
func TestMultipartConditionsCheck(t *testing.T) {
	gw := testservers.StartVersityGW(t)
	creds := credentials.NewStaticCredentialsProvider(gw.AccessKey, gw.Secret, "")
	for name, r := range CheckMultipartConditions(context.Background(), Options{Endpoint: gw.Endpoint, Credentials: creds, PathStyle: true}) {
		if r.Verdict != Native {
			t.Errorf("versitygw %s: %s (%s), want native", name, r.Verdict, r.Detail)
		}
	}
	client := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(gw.Endpoint), UsePathStyle: true, Credentials: creds})
	if buckets, err := client.ListBuckets(context.Background(), &s3.ListBucketsInput{}); err != nil || len(buckets.Buckets) != 0 {
		t.Fatalf("the check left %d buckets (%v)", len(buckets.Buckets), err)
	}
	fake := startFake(t, func(inner http.Handler) http.Handler { return inner })
	for name, r := range CheckMultipartConditions(context.Background(), fake) {
		if r.Verdict == Native {
			t.Errorf("gofakes3 %s: %s (%s), want anything but native", name, r.Verdict, r.Detail)
		}
	}
}

// On s3rver (no object lock, no multipart conditions) the checks say so
// and still remove their scratch buckets.
func TestScratchBucketChecksOnS3rver(t *testing.T) {
	sr := testservers.StartS3rver(t, "kept")
	opts := Options{Endpoint: sr.Endpoint, AccessKeyID: sr.AccessKey, SecretKey: sr.Secret, PathStyle: true}
	if r := CheckObjectLock(context.Background(), opts); r.Verdict == Native {
		t.Errorf("object lock: %s (%s), want anything but native", r.Verdict, r.Detail)
	}
	for name, r := range CheckMultipartConditions(context.Background(), opts) {
		if r.Verdict == Native {
			t.Errorf("%s: %s (%s), want anything but native", name, r.Verdict, r.Detail)
		}
	}
	client := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(sr.Endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(sr.AccessKey, sr.Secret, "")})
	buckets, err := client.ListBuckets(context.Background(), &s3.ListBucketsInput{})
	if err != nil || len(buckets.Buckets) != 1 {
		t.Fatalf("after the checks the store has %d buckets (%v), want only its own", len(buckets.Buckets), err)
	}
}

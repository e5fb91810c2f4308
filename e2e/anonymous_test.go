package e2e

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// With anonymous.buckets set, an unsigned client (the AWS SDK with
// anonymous credentials, as `aws --no-sign-request` is) reads objects and
// listings of those buckets; everything else it tries is AccessDenied and
// changes nothing on versitygw.
func TestAnonymousReadGrant(t *testing.T) {
	e := NewEnv(t, WithConfig(func(c *Config) {
		c.Anonymous = &AnonymousConfig{Buckets: []string{"public-*"}, Access: "read-only"}
	}))
	e.RequireProxy(t)
	signed := e.Client(t, e.RW)
	ctx := context.Background()
	for _, bucket := range []string{"public-assets", "private-assets"} {
		CreateBucket(t, signed, bucket)
		if _, err := signed.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("logo.svg"),
			Body: strings.NewReader("<svg/>")}); err != nil {
			t.Fatal(err)
		}
	}
	anonymous := NewS3Client(e.Endpoint, Credentials{}, nil, func(o *s3.Options) { o.Credentials = aws.AnonymousCredentials{} })

	got, err := anonymous.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("public-assets"), Key: aws.String("logo.svg")})
	if err != nil {
		t.Fatalf("anonymous GetObject on the granted bucket: %v", err)
	}
	body, _ := io.ReadAll(got.Body)
	got.Body.Close()
	if string(body) != "<svg/>" {
		t.Errorf("anonymous GetObject read %q", body)
	}
	if _, err := anonymous.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("public-assets"), Key: aws.String("logo.svg")}); err != nil {
		t.Errorf("anonymous HeadObject on the granted bucket: %v", err)
	}
	list, err := anonymous.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("public-assets")})
	if err != nil || len(list.Contents) != 1 || aws.ToString(list.Contents[0].Key) != "logo.svg" {
		t.Errorf("anonymous ListObjectsV2 on the granted bucket: %+v, %v", list, err)
	}

	refused := map[string]func() error{
		"GetObject, other bucket": func() error {
			_, err := anonymous.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("private-assets"), Key: aws.String("logo.svg")})
			return err
		},
		"ListObjectsV2, other bucket": func() error {
			_, err := anonymous.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("private-assets")})
			return err
		},
		"PutObject": func() error {
			_, err := anonymous.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("public-assets"), Key: aws.String("logo.svg"), Body: strings.NewReader("defaced")})
			return err
		},
		"DeleteObject": func() error {
			_, err := anonymous.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("public-assets"), Key: aws.String("logo.svg")})
			return err
		},
		"GetObjectAcl": func() error {
			_, err := anonymous.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: aws.String("public-assets"), Key: aws.String("logo.svg")})
			return err
		},
		"ListBuckets": func() error {
			_, err := anonymous.ListBuckets(ctx, &s3.ListBucketsInput{})
			return err
		},
	}
	for name, call := range refused {
		if err := call(); ErrorCode(err) != "AccessDenied" {
			t.Errorf("anonymous %s: %v, want AccessDenied", name, err)
		}
	}
	stored, err := e.BackendClient().GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("public-assets"), Key: aws.String("logo.svg")})
	if err != nil {
		t.Fatalf("public-assets/logo.svg is gone from the store: %v", err)
	}
	defer stored.Body.Close()
	if b, _ := io.ReadAll(stored.Body); string(b) != "<svg/>" {
		t.Errorf("the store holds %q after the refused writes", b)
	}
}

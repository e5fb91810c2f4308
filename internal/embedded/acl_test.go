package embedded

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

func TestACLsReadAsPrivateAndCannotBeSet(t *testing.T) {
	ctx, _, c := startStoreWithClient(t)
	putObject(t, ctx, c, "k", []byte("the object"))

	objectACL, err := c.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: devBucket, Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	bucketACL, err := c.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: devBucket})
	if err != nil {
		t.Fatal(err)
	}
	for what, grants := range map[string][]types.Grant{"object": objectACL.Grants, "bucket": bucketACL.Grants} {
		if len(grants) != 1 || grants[0].Permission != types.PermissionFullControl || aws.ToString(grants[0].Grantee.ID) != "s3cond" {
			t.Errorf("%s ACL grants %+v, want FULL_CONTROL to the owner alone", what, grants)
		}
	}

	var apiErr smithy.APIError
	_, err = c.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: devBucket, Key: aws.String("missing")})
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "NoSuchKey" {
		t.Errorf("ACL of a missing object: %v, want NoSuchKey", err)
	}

	// Setting an ACL is refused, and the object is untouched.
	_, err = c.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: devBucket, Key: aws.String("k"), ACL: types.ObjectCannedACLPublicRead})
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "NotImplemented" {
		t.Errorf("put object ACL: %v, want NotImplemented", err)
	}
	got, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: devBucket, Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	defer got.Body.Close()
	if body, _ := io.ReadAll(got.Body); !bytes.Equal(body, []byte("the object")) {
		t.Errorf("object after a refused ACL change: %q", body)
	}
}

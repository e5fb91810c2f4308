package proxy

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// A PutBucketAcl that sets the ACL by a header and by a body at once is
// S3's 400 UnexpectedContent, answered before the store sees it (versitygw's
// PutBucketAcl_invalid_acl_canned_and_grants and _acp_and_grants).
func TestPutBucketAclWithHeaderAndBodyIsUnexpectedContent(t *testing.T) {
	var aclPuts atomic.Int32
	f := newFixtureWith(t, fixtureOptions{backendHook: func(r *http.Request) {
		if r.Method == http.MethodPut && r.URL.Query().Has("acl") {
			aclPuts.Add(1)
		}
	}})
	policy := &s3types.AccessControlPolicy{
		Owner: &s3types.Owner{ID: aws.String("owner")},
		Grants: []s3types.Grant{{
			Grantee:    &s3types.Grantee{ID: aws.String(clientIdentityOf(testKeyID)), Type: s3types.TypeCanonicalUser},
			Permission: s3types.PermissionFullControl,
		}},
	}
	ctx := context.Background()
	for name, in := range map[string]*s3.PutBucketAclInput{
		"canned ACL and body": {Bucket: aws.String(bucketName), ACL: s3types.BucketCannedACLPrivate, AccessControlPolicy: policy},
		"grant and body":      {Bucket: aws.String(bucketName), GrantFullControl: aws.String("id=x"), AccessControlPolicy: policy},
	} {
		_, err := f.client.PutBucketAcl(ctx, in)
		if errorCode(err) != "UnexpectedContent" {
			t.Errorf("%s: %v, want UnexpectedContent", name, err)
		}
	}
	if n := aclPuts.Load(); n != 0 {
		t.Errorf("the store got %d PutBucketAcl, want none", n)
	}
	// Either alone reaches the store.
	_, _ = f.client.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String(bucketName), ACL: s3types.BucketCannedACLPrivate})
	_, _ = f.client.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String(bucketName), AccessControlPolicy: policy})
	if n := aclPuts.Load(); n != 2 {
		t.Errorf("the store got %d PutBucketAcl, want 2", n)
	}
}

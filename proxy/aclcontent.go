package proxy

import (
	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/s3err"
)

// checkACLContent refuses a PutBucketAcl that sets the ACL twice: with a
// canned ACL (x-amz-acl) or grant headers (x-amz-grant-*) and also with an
// AccessControlPolicy body. S3 answers 400 UnexpectedContent, "This
// request does not support content." s3cond answers it itself because the
// store would judge the body first: versitygw answers InvalidArgument
// "Invalid id" when the body names an owner it does not know.
func checkACLContent(c *call) error {
	if c.op != operation.PutBucketAcl || c.auth.Body.Length() == 0 {
		return nil
	}
	// A presigned URL's ?x-amz-acl= sets the ACL as the header does.
	set, err := requestACLHeaders(c)
	if err != nil {
		return err
	}
	if len(set) > 0 {
		return s3err.New(s3err.UnexpectedContent)
	}
	return nil
}

package probe

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// ObjectLock is the capability behind forwarding the object-lock headers
// (docs/spec.md §7). Native: in a bucket created with object lock, an
// object put under a legal hold reads back held, and a delete of it (its
// version, where the store versions) is refused. A store that ignores the
// headers would keep no hold, and s3cond answers them 501 instead.
const ObjectLock = "object_lock"

// CheckObjectLock checks ObjectLock in a scratch bucket it creates (object
// lock is chosen when a bucket is created) and removes with its object.
func CheckObjectLock(ctx context.Context, opts Options) Result {
	opts = opts.withDefaults()
	runCtx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	s := newStore(opts)
	defer s.close()
	bucket := strings.TrimSuffix(opts.Prefix, "/") + "-lock"
	c := s.c()
	create := &s3.CreateBucketInput{Bucket: &bucket, ObjectLockEnabledForBucket: aws.Bool(true)}
	if opts.Region != "us-east-1" {
		create.CreateBucketConfiguration = &types.CreateBucketConfiguration{LocationConstraint: types.BucketLocationConstraint(opts.Region)}
	}
	if _, err := c.CreateBucket(runCtx, create); err != nil {
		return Result{Verdict: Refused, Detail: "CreateBucket with object lock: " + answered(0, nil, err).String() +
			" (object lock is chosen when a bucket is created, so a key that may not create buckets cannot check it)"}
	}
	key := "held"
	var version *string
	defer func() {
		cleanCtx, cancelClean := context.WithTimeout(context.WithoutCancel(ctx), opts.cleanupBound())
		defer cancelClean()
		_, _ = c.PutObjectLegalHold(cleanCtx, &s3.PutObjectLegalHoldInput{Bucket: &bucket, Key: &key, VersionId: version,
			LegalHold: &types.ObjectLockLegalHold{Status: types.ObjectLockLegalHoldStatusOff}})
		_, _ = c.DeleteObject(cleanCtx, &s3.DeleteObjectInput{Bucket: &bucket, Key: &key, VersionId: version})
		_, _ = c.DeleteBucket(cleanCtx, &s3.DeleteBucketInput{Bucket: &bucket})
	}()
	return checkLegalHold(runCtx, c, bucket, key, &version)
}

// checkLegalHold puts key under a legal hold and checks that the hold
// reads back and stops a delete; version is set to the put's version.
func checkLegalHold(ctx context.Context, c *s3.Client, bucket, key string, version **string) Result {
	body := "held by the object-lock check"
	put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: strings.NewReader(body),
		ContentLength: aws.Int64(int64(len(body))), ObjectLockLegalHoldStatus: types.ObjectLockLegalHoldStatusOn})
	if err != nil {
		return Result{Verdict: Refused, Detail: "PutObject under a legal hold: " + answered(0, nil, err).String()}
	}
	*version = put.VersionId
	hold, err := c.GetObjectLegalHold(ctx, &s3.GetObjectLegalHoldInput{Bucket: &bucket, Key: &key, VersionId: put.VersionId})
	if err != nil || hold.LegalHold == nil || hold.LegalHold.Status != types.ObjectLockLegalHoldStatusOn {
		return Result{Verdict: Ignored, Detail: fmt.Sprintf("an object put under a legal hold does not read back held (%s)", answered(0, nil, err))}
	}
	_, err = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &bucket, Key: &key, VersionId: put.VersionId})
	if o := answered(204, nil, err); o.status != 403 {
		return Result{Verdict: Ignored, Detail: "a delete of an object under a legal hold answered " + o.String()}
	}
	return Result{Verdict: Native, Detail: "an object put under a legal hold reads back held, and its delete is refused (403)"}
}

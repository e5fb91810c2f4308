package probe

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// The multipart conditions s3cond does not check itself (docs/spec.md §7):
// forwarded only to a store that refuses a request whose condition fails.
const (
	// MPUObjectSize: CompleteMultipartUpload's x-amz-mp-object-size.
	MPUObjectSize = "mpu_object_size"
	// AbortInitiatedTime: AbortMultipartUpload's x-amz-if-match-initiated-time.
	AbortInitiatedTime = "abort_if_match_initiated_time"
)

// CheckMultipartConditions checks MPUObjectSize and AbortInitiatedTime in
// opts.Bucket (probe_bucket) under a scratch prefix, or with no bucket in a
// scratch bucket it creates and removes: a Complete naming the wrong size
// and an Abort naming the wrong start must each be refused, with the
// upload left in place.
func CheckMultipartConditions(ctx context.Context, opts Options) map[string]Result {
	opts = opts.withDefaults()
	runCtx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	scratchBucket := opts.Bucket == ""
	if scratchBucket {
		bucket, err := createScratchBucket(runCtx, opts, "-mpu")
		if err != nil {
			failed := Result{Verdict: Error, Detail: "multipart conditions: " + err.Error()}
			return map[string]Result{MPUObjectSize: failed, AbortInitiatedTime: failed}
		}
		opts.Bucket = bucket
	}
	s := newStore(opts)
	defer func() {
		cleanCtx, cancelClean := context.WithTimeout(context.WithoutCancel(ctx), opts.cleanupBound())
		defer cancelClean()
		s.cleanup(cleanCtx)
		if scratchBucket {
			_, _ = s.c().DeleteBucket(cleanCtx, &s3.DeleteBucketInput{Bucket: &s.bucket})
		}
		s.close()
	}()
	return map[string]Result{MPUObjectSize: checkMPUObjectSize(runCtx, s), AbortInitiatedTime: checkAbortInitiatedTime(runCtx, s)}
}

func checkMPUObjectSize(ctx context.Context, s *store) Result {
	key := s.key("mpu-size")
	in, err := s.startUpload(ctx, s.c(), key, "part of "+key)
	if err != nil {
		return Result{Verdict: Error, Detail: err.Error()}
	}
	size := int64(len("part of " + key)) // startUpload's one part
	in.MpuObjectSize = aws.Int64(size + 1)
	// Only a refusal counts: a 5xx or a lost answer says nothing about the
	// size, and the right-size Complete that follows would then succeed.
	switch o := s.complete(ctx, s.c(), in); {
	case o.status == 200:
		return Result{Verdict: Ignored, Detail: "a Complete naming a wrong x-amz-mp-object-size succeeded"}
	case o.status != 400 && o.status != 412:
		return Result{Verdict: Error, Detail: "a Complete naming a wrong x-amz-mp-object-size answered " + o.String() + ", not a refusal (400 or 412)"}
	}
	in.MpuObjectSize = aws.Int64(size)
	if o := s.complete(ctx, s.c(), in); o.status != 200 {
		return Result{Verdict: Refused, Detail: "a Complete naming the right x-amz-mp-object-size answered " + o.String()}
	}
	return Result{Verdict: Native, Detail: "a Complete naming a wrong x-amz-mp-object-size is refused, the right one completes"}
}

func checkAbortInitiatedTime(ctx context.Context, s *store) Result {
	key := s.key("abort-initiated")
	created, err := s.c().CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		return Result{Verdict: Error, Detail: "CreateMultipartUpload: " + answered(0, nil, err).String()}
	}
	s.written.started(key, aws.ToString(created.UploadId)) // aborted by cleanup if the check leaves it open
	wrong := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	_, err = s.c().AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &s.bucket, Key: &key,
		UploadId: created.UploadId, IfMatchInitiatedTime: &wrong})
	if o := answered(204, nil, err); o.status != 412 {
		return Result{Verdict: Ignored, Detail: "an Abort naming a wrong x-amz-if-match-initiated-time answered " + o.String()}
	}
	if _, err := s.c().ListParts(ctx, &s3.ListPartsInput{Bucket: &s.bucket, Key: &key, UploadId: created.UploadId}); err != nil {
		return Result{Verdict: Ignored, Detail: "an Abort refused for its initiated time still removed the upload: " + answered(0, nil, err).String()}
	}
	return Result{Verdict: Native, Detail: "an Abort naming a wrong x-amz-if-match-initiated-time is refused (412), the upload kept"}
}

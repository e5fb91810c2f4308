package e2e

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// storeFeatures is what a store does, alone or behind s3cond, with the
// requests of issue 36's features (docs/features-by-store.md).
type storeFeatures struct {
	Append          string // PutObject x-amz-write-offset-bytes = the size
	Rename          string // RenameObject
	RetriedComplete string // CompleteMultipartUpload sent again after a 200
	// RetriedCompleteIfNoneMatch: the same, both sent with If-None-Match: *.
	RetriedCompleteIfNoneMatch string
	SigV2                      string // a GET presigned by aws-cli v1 (SigV2)
}

// measureStoreFeatures sends each request straight to the store.
func measureStoreFeatures(t *testing.T, kind BackendKind) storeFeatures {
	t.Helper()
	store, _ := StartStore(t, kind)
	return measureFeatures(t, NewS3Client(store.Endpoint, store.Cred, nil), &Env{Endpoint: store.Endpoint}, store.Cred)
}

// measureThroughS3cond sends them through s3cond in front of the store,
// SigV2 accepted.
func measureThroughS3cond(t *testing.T, kind BackendKind) storeFeatures {
	t.Helper()
	e := NewEnv(t, WithBackend(kind), WithProcessEnv("S3COND_AUTH_SIGNATURE_V2=true"))
	e.RequireProxy(t)
	return measureFeatures(t, e.Client(t, e.RW), e, e.RW)
}

func measureFeatures(t *testing.T, c *s3.Client, e *Env, cred Credentials) storeFeatures {
	t.Helper()
	ctx := t.Context()
	CreateBucket(t, c, "features")
	return storeFeatures{
		Append:                     measureAppend(t, ctx, c),
		Rename:                     measureRename(t, ctx, c),
		RetriedComplete:            measureRetriedComplete(t, ctx, c, "mpu", nil),
		RetriedCompleteIfNoneMatch: measureRetriedComplete(t, ctx, c, "mpu-inm", aws.String("*")),
		SigV2:                      measureSigV2(t, c, e, cred),
	}
}

func answer(err error) string {
	if code := ErrorCode(err); code != "" {
		return fmt.Sprintf("%d %s", HTTPStatus(err), code)
	}
	return fmt.Sprintf("%d", HTTPStatus(err))
}

func measureAppend(t *testing.T, ctx context.Context, c *s3.Client) string {
	seed := []byte("seed")
	putBytes(t, ctx, c, "features", "log", seed)
	_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("features"), Key: aws.String("log"),
		Body: bytes.NewReader([]byte("+more")), WriteOffsetBytes: aws.Int64(int64(len(seed)))})
	got := getBytes(t, ctx, c, "features", "log")
	switch {
	case err != nil && bytes.Equal(got, seed):
		return "refused " + answer(err)
	case err == nil && string(got) == "seed+more":
		return "appended"
	case err == nil && string(got) == "+more":
		return "replaced"
	}
	return fmt.Sprintf("%v, object %q", err, got)
}

func measureRename(t *testing.T, ctx context.Context, c *s3.Client) string {
	putBytes(t, ctx, c, "features", "src", []byte("source"))
	_, err := c.RenameObject(ctx, &s3.RenameObjectInput{Bucket: aws.String("features"), Key: aws.String("dst"),
		RenameSource: aws.String("/features/src")})
	src, srcErr := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("features"), Key: aws.String("src")})
	if srcErr == nil {
		src.Body.Close()
	}
	dst, dstErr := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("features"), Key: aws.String("dst")})
	switch {
	case err != nil && dstErr != nil:
		return "refused " + answer(err)
	case err == nil && srcErr != nil && dstErr == nil:
		return "renamed"
	case err == nil && srcErr == nil && dstErr == nil && aws.ToInt64(dst.ContentLength) == 0:
		return "200, an empty object written at the destination, the source kept"
	}
	return fmt.Sprintf("%v; source: %v; destination: %v", err, srcErr, dstErr)
}

func measureRetriedComplete(t *testing.T, ctx context.Context, c *s3.Client, key string, ifNoneMatch *string) string {
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("features"), Key: aws.String(key)})
	if err != nil {
		t.Fatal(err)
	}
	part, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("features"), Key: aws.String(key), UploadId: up.UploadId,
		PartNumber: aws.Int32(1), Body: bytes.NewReader([]byte("one part"))})
	if err != nil {
		t.Fatal(err)
	}
	complete := &s3.CompleteMultipartUploadInput{Bucket: aws.String("features"), Key: aws.String(key), UploadId: up.UploadId, IfNoneMatch: ifNoneMatch,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: part.ETag, PartNumber: aws.Int32(1)}}}}
	first, err := c.CompleteMultipartUpload(ctx, complete)
	if err != nil {
		return "the first Complete: " + answer(err)
	}
	again, err := c.CompleteMultipartUpload(ctx, complete)
	switch {
	case err != nil:
		return answer(err)
	case aws.ToString(again.ETag) == aws.ToString(first.ETag):
		return "200, same ETag"
	}
	return fmt.Sprintf("200, ETag %s then %s", aws.ToString(first.ETag), aws.ToString(again.ETag))
}

func measureSigV2(t *testing.T, c *s3.Client, e *Env, cred Credentials) string {
	putBytes(t, t.Context(), c, "features", "presigned", []byte("v2"))
	status, body := httpGet(t, presignV2(t, e, cred, "s3://features/presigned"))
	if status == 200 && body == "v2" {
		return "200"
	}
	return fmt.Sprintf("%d", status)
}

// TestIssue36FeaturesByStore measures what docs/features-by-store.md says
// each store of the testbed does with RenameObject, append, a retried
// CompleteMultipartUpload and SigV2, alone and through s3cond.
func TestIssue36FeaturesByStore(t *testing.T) {
	for _, kind := range []BackendKind{BackendVersityGW, BackendS3rver, BackendMoto} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			alone, through := measureStoreFeatures(t, kind), measureThroughS3cond(t, kind)
			t.Logf("%s alone: %+v", kind, alone)
			t.Logf("%s through s3cond: %+v", kind, through)
			if w, ok := featuresAlone[kind]; ok && alone != w {
				t.Errorf("%s alone: %+v; docs/features-by-store.md says %+v", kind, alone, w)
			}
			if w, ok := featuresThroughS3cond[kind]; ok && through != w {
				t.Errorf("%s through s3cond: %+v; docs/features-by-store.md says %+v", kind, through, w)
			}
		})
	}
}

// emptyAtDestination: a store without RenameObject takes it for a
// PutObject of an empty body.
const emptyAtDestination = "200, an empty object written at the destination, the source kept"

// featuresAlone is docs/features-by-store.md's "alone" table, as measured
// on 2026-12-07 (versitygw v1.8.0, s3rver 3.7.1, moto 5.2.1).
var featuresAlone = map[BackendKind]storeFeatures{
	BackendVersityGW: {Append: "replaced", Rename: emptyAtDestination, RetriedComplete: "200, same ETag",
		RetriedCompleteIfNoneMatch: "200, same ETag", SigV2: "400"},
	BackendS3rver: {Append: "replaced", Rename: emptyAtDestination, RetriedComplete: "500 InternalError",
		RetriedCompleteIfNoneMatch: "500 InternalError", SigV2: "200"},
	BackendMoto: {Append: "replaced", Rename: emptyAtDestination, RetriedComplete: "200, same ETag",
		RetriedCompleteIfNoneMatch: "200, same ETag", SigV2: "200"},
}

// featuresThroughS3cond is its "through s3cond today" table: a retried
// completion answers 200 with the first answer's ETag on every store, with
// or without If-None-Match (exactly-once retries, proxy/completion.go).
var featuresThroughS3cond = map[BackendKind]storeFeatures{
	BackendVersityGW: {Append: "appended", Rename: "renamed", RetriedComplete: "200, same ETag",
		RetriedCompleteIfNoneMatch: "200, same ETag", SigV2: "200"},
	BackendS3rver: {Append: "appended", Rename: "renamed", RetriedComplete: "200, same ETag",
		RetriedCompleteIfNoneMatch: "200, same ETag", SigV2: "200"},
	BackendMoto: {Append: "appended", Rename: "renamed", RetriedComplete: "200, same ETag",
		RetriedCompleteIfNoneMatch: "200, same ETag", SigV2: "200"},
}

package e2e

import (
	"bytes"
	"context"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestEveryOperation runs one scenario covering the S3 operations s3cond
// forwards through the target, then the same scenario straight against
// versitygw, asserting behaviour in both and that both observed the same.
func TestEveryOperation(t *testing.T) {
	e := NewEnv(t)
	viaTarget := runOperationsScenario(t, e.Client(t, e.RW), "ops-bucket")
	direct := runOperationsScenario(t, e.BackendClient(), "ops-bucket-direct")
	requireSameTranscript(t, viaTarget, direct)
}

func runOperationsScenario(t *testing.T, c *s3.Client, bucket string) *transcript {
	t.Helper()
	ctx := t.Context()
	tr := &transcript{}

	CreateBucket(t, c, bucket)
	buckets, err := c.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil {
		t.Fatalf("list buckets: %v", err)
	}
	if !slices.ContainsFunc(buckets.Buckets, func(b types.Bucket) bool { return aws.ToString(b.Name) == bucket }) {
		t.Fatalf("ListBuckets does not list %s", bucket)
	}
	if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("head bucket: %v", err)
	}

	body := PatternBytes(1, 1000)
	putAttrs(t, ctx, c, bucket, tr, body)
	getRanges(t, ctx, c, bucket, tr, body)
	tagging(t, ctx, c, bucket, tr)
	copyObjects(t, ctx, c, bucket, tr, body)
	listings(t, ctx, c, bucket, tr)
	deletes(t, ctx, c, bucket, tr)
	multipart(t, ctx, c, bucket, tr, body)
	deleteBucket(t, ctx, c, bucket, tr)
	return tr
}

func putAttrs(t *testing.T, ctx context.Context, c *s3.Client, bucket string, tr *transcript, body []byte) {
	put, err := c.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String("dir/a.txt"), Body: bytes.NewReader(body),
		ContentType:        aws.String("text/plain; charset=utf-8"),
		ContentDisposition: aws.String(`attachment; filename="a.txt"`),
		CacheControl:       aws.String("max-age=60"),
		Metadata:           map[string]string{"color": "blue", "mixed-case": "Value With Spaces"},
	})
	if err != nil {
		t.Fatalf("put with attributes: %v", err)
	}
	tr.add("put etag=%s", aws.ToString(put.ETag))

	get, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("dir/a.txt")})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	got, err := io.ReadAll(get.Body)
	get.Body.Close()
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	if !bytes.Equal(got, body) {
		t.Fatalf("get returned %d bytes that differ from the %d put", len(got), len(body))
	}
	if aws.ToString(get.ETag) != aws.ToString(put.ETag) {
		t.Errorf("get etag %s, put etag %s", aws.ToString(get.ETag), aws.ToString(put.ETag))
	}
	for name, pair := range map[string][2]string{
		"Content-Type":        {aws.ToString(get.ContentType), "text/plain; charset=utf-8"},
		"Content-Disposition": {aws.ToString(get.ContentDisposition), `attachment; filename="a.txt"`},
		"Cache-Control":       {aws.ToString(get.CacheControl), "max-age=60"},
		"x-amz-meta-color":    {get.Metadata["color"], "blue"},
		"x-amz-meta-mixed":    {get.Metadata["mixed-case"], "Value With Spaces"},
	} {
		if pair[0] != pair[1] {
			t.Errorf("GET %s = %q, want %q", name, pair[0], pair[1])
		}
	}
	tr.add("get len=%d type=%s disp=%s cache=%s meta=%v", aws.ToInt64(get.ContentLength),
		aws.ToString(get.ContentType), aws.ToString(get.ContentDisposition), aws.ToString(get.CacheControl), sortedMap(get.Metadata))

	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("dir/a.txt")})
	if err != nil {
		t.Fatalf("head: %v", err)
	}
	if aws.ToInt64(head.ContentLength) != int64(len(body)) || aws.ToString(head.ETag) != aws.ToString(put.ETag) {
		t.Errorf("head: length %d etag %s, want %d %s", aws.ToInt64(head.ContentLength), aws.ToString(head.ETag), len(body), aws.ToString(put.ETag))
	}
	tr.add("head len=%d etag=%s type=%s meta=%v", aws.ToInt64(head.ContentLength), aws.ToString(head.ETag),
		aws.ToString(head.ContentType), sortedMap(head.Metadata))
}

func getRanges(t *testing.T, ctx context.Context, c *s3.Client, bucket string, tr *transcript, body []byte) {
	for _, tc := range []struct {
		rng        string
		start, end int // the bytes expected, body[start:end]
	}{
		{"bytes=0-9", 0, 10},
		{"bytes=10-", 10, 1000},
		{"bytes=-7", 993, 1000},
		{"bytes=5-5", 5, 6},
		{"bytes=990-5000", 990, 1000}, // past the end: clipped
	} {
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("dir/a.txt"), Range: aws.String(tc.rng)})
		if err != nil {
			t.Fatalf("get %s: %v", tc.rng, err)
		}
		got, err := io.ReadAll(out.Body)
		out.Body.Close()
		if err != nil {
			t.Fatalf("read %s: %v", tc.rng, err)
		}
		if !bytes.Equal(got, body[tc.start:tc.end]) {
			t.Errorf("range %s: got %d bytes, want body[%d:%d]", tc.rng, len(got), tc.start, tc.end)
		}
		tr.add("range %s -> %s len=%d", tc.rng, aws.ToString(out.ContentRange), aws.ToInt64(out.ContentLength))
	}
	_, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("dir/a.txt"), Range: aws.String("bytes=5000-6000")})
	RequireS3Error(t, err, 416, "InvalidRange")
	tr.add("unsatisfiable range -> %d %s", HTTPStatus(err), ErrorCode(err))

	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("no/such/key")})
	RequireS3Error(t, err, 404, "NoSuchKey")
	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("no-such-bucket-e2e"), Key: aws.String("k")})
	RequireS3Error(t, err, 404, "NoSuchBucket")
}

func tagging(t *testing.T, ctx context.Context, c *s3.Client, bucket string, tr *transcript) {
	_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("tagged"),
		Body: strings.NewReader("tagged"), Tagging: aws.String("team=storage&env=test")})
	if err != nil {
		t.Fatalf("put with tagging: %v", err)
	}
	requireTags(t, ctx, c, bucket, "tagged", map[string]string{"team": "storage", "env": "test"}, tr)
	_, err = c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String(bucket), Key: aws.String("tagged"),
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("stage"), Value: aws.String("two")}}}})
	if err != nil {
		t.Fatalf("put object tagging: %v", err)
	}
	requireTags(t, ctx, c, bucket, "tagged", map[string]string{"stage": "two"}, tr)
	if _, err := c.DeleteObjectTagging(ctx, &s3.DeleteObjectTaggingInput{Bucket: aws.String(bucket), Key: aws.String("tagged")}); err != nil {
		t.Fatalf("delete object tagging: %v", err)
	}
	requireTags(t, ctx, c, bucket, "tagged", map[string]string{}, tr)
}

func requireTags(t *testing.T, ctx context.Context, c *s3.Client, bucket, key string, want map[string]string, tr *transcript) {
	t.Helper()
	out, err := c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("get object tagging: %v", err)
	}
	got := map[string]string{}
	for _, tag := range out.TagSet {
		got[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
	}
	if !maps.Equal(got, want) {
		t.Errorf("tags of %s: got %v, want %v", key, got, want)
	}
	tr.add("tags %s = %v", key, sortedMap(got))
}

func copyObjects(t *testing.T, ctx context.Context, c *s3.Client, bucket string, tr *transcript, body []byte) {
	cp, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(bucket), Key: aws.String("dir/b.txt"),
		CopySource: aws.String(bucket + "/dir/a.txt")})
	if err != nil {
		t.Fatalf("copy object: %v", err)
	}
	tr.add("copy etag=%s", aws.ToString(cp.CopyObjectResult.ETag))
	if got := getBytes(t, ctx, c, bucket, "dir/b.txt"); !bytes.Equal(got, body) {
		t.Errorf("copy has %d bytes that differ from the source", len(got))
	}
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("dir/b.txt")})
	if err != nil {
		t.Fatalf("head copy: %v", err)
	}
	if head.Metadata["color"] != "blue" {
		t.Errorf("copy with directive COPY lost metadata: %v", head.Metadata)
	}
	tr.add("copy meta=%v type=%s", sortedMap(head.Metadata), aws.ToString(head.ContentType))

	_, err = c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(bucket), Key: aws.String("dir/b.txt"),
		CopySource: aws.String(bucket + "/dir/a.txt"), MetadataDirective: types.MetadataDirectiveReplace,
		Metadata: map[string]string{"color": "green"}, ContentType: aws.String("application/x-e2e")})
	if err != nil {
		t.Fatalf("copy object replacing metadata: %v", err)
	}
	head, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("dir/b.txt")})
	if err != nil {
		t.Fatalf("head replaced copy: %v", err)
	}
	if head.Metadata["color"] != "green" || aws.ToString(head.ContentType) != "application/x-e2e" {
		t.Errorf("copy with directive REPLACE: meta %v type %s", head.Metadata, aws.ToString(head.ContentType))
	}
	tr.add("replaced copy meta=%v type=%s", sortedMap(head.Metadata), aws.ToString(head.ContentType))

	_, err = c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(bucket), Key: aws.String("dir/c.txt"),
		CopySource: aws.String(bucket + "/no/such/source")})
	RequireS3Error(t, err, 404, "NoSuchKey")
}

func listings(t *testing.T, ctx context.Context, c *s3.Client, bucket string, tr *transcript) {
	for _, key := range []string{"dir/sub/c.txt", "top.txt", "x/1", "x/2", "x/3", "x/4", "x/5", "with space/ü+&=.txt"} {
		putBytes(t, ctx, c, bucket, key, []byte(key))
	}
	all := []string{"dir/a.txt", "dir/b.txt", "dir/sub/c.txt", "tagged", "top.txt", "with space/ü+&=.txt",
		"x/1", "x/2", "x/3", "x/4", "x/5"}

	v2, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String("dir/"), Delimiter: aws.String("/")})
	if err != nil {
		t.Fatalf("list v2 with delimiter: %v", err)
	}
	keys, prefixes := objectKeys(v2.Contents), commonPrefixes(v2.CommonPrefixes)
	if !slices.Equal(keys, []string{"dir/a.txt", "dir/b.txt"}) || !slices.Equal(prefixes, []string{"dir/sub/"}) {
		t.Errorf("list v2 prefix dir/ delimiter /: keys %v prefixes %v", keys, prefixes)
	}
	tr.add("v2 dir/ /: %v %v", keys, prefixes)

	v2, err = c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Delimiter: aws.String("/")})
	if err != nil {
		t.Fatalf("list v2 top level: %v", err)
	}
	keys, prefixes = objectKeys(v2.Contents), commonPrefixes(v2.CommonPrefixes)
	if !slices.Equal(keys, []string{"tagged", "top.txt"}) || !slices.Equal(prefixes, []string{"dir/", "with space/", "x/"}) {
		t.Errorf("list v2 delimiter /: keys %v prefixes %v", keys, prefixes)
	}
	tr.add("v2 /: %v %v", keys, prefixes)

	var paged []string
	pages := 0
	var token *string
	for {
		out, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), MaxKeys: aws.Int32(3), ContinuationToken: token})
		if err != nil {
			t.Fatalf("list v2 page %d: %v", pages, err)
		}
		pages++
		paged = append(paged, objectKeys(out.Contents)...)
		if len(out.Contents) > 3 {
			t.Errorf("list v2 page with MaxKeys 3 returned %d keys", len(out.Contents))
		}
		if !aws.ToBool(out.IsTruncated) {
			break
		}
		token = out.NextContinuationToken
		if pages > 10 {
			t.Fatal("list v2 pagination does not end")
		}
	}
	if !slices.Equal(paged, all) || pages != 4 {
		t.Errorf("list v2 paginated in %d pages: %v, want 4 pages of %v", pages, paged, all)
	}
	tr.add("v2 paged %d: %v", pages, paged)

	v2, err = c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), StartAfter: aws.String("x/3")})
	if err != nil {
		t.Fatalf("list v2 start-after: %v", err)
	}
	if keys := objectKeys(v2.Contents); !slices.Equal(keys, []string{"x/4", "x/5"}) {
		t.Errorf("list v2 start-after x/3: %v", keys)
	}

	var v1keys []string
	var marker *string
	pages = 0
	for {
		out, err := c.ListObjects(ctx, &s3.ListObjectsInput{Bucket: aws.String(bucket), Prefix: aws.String("x/"), MaxKeys: aws.Int32(2), Marker: marker})
		if err != nil {
			t.Fatalf("list v1 page %d: %v", pages, err)
		}
		pages++
		page := objectKeys(out.Contents)
		v1keys = append(v1keys, page...)
		if !aws.ToBool(out.IsTruncated) {
			break
		}
		marker = out.NextMarker
		if marker == nil && len(page) > 0 {
			marker = aws.String(page[len(page)-1])
		}
		if pages > 10 {
			t.Fatal("list v1 pagination does not end")
		}
	}
	if !slices.Equal(v1keys, []string{"x/1", "x/2", "x/3", "x/4", "x/5"}) || pages != 3 {
		t.Errorf("list v1 prefix x/ in %d pages: %v", pages, v1keys)
	}
	tr.add("v1 paged %d: %v", pages, v1keys)

	v1, err := c.ListObjects(ctx, &s3.ListObjectsInput{Bucket: aws.String(bucket), Delimiter: aws.String("/"), Prefix: aws.String("dir/")})
	if err != nil {
		t.Fatalf("list v1 with delimiter: %v", err)
	}
	tr.add("v1 dir/ /: %v %v", objectKeys(v1.Contents), commonPrefixes(v1.CommonPrefixes))
	if got := getBytes(t, ctx, c, bucket, "with space/ü+&=.txt"); string(got) != "with space/ü+&=.txt" {
		t.Errorf("key with special characters read back %q", got)
	}
}

func deletes(t *testing.T, ctx context.Context, c *s3.Client, bucket string, tr *transcript) {
	out, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucket), Delete: &types.Delete{Objects: []types.ObjectIdentifier{
		{Key: aws.String("x/1")}, {Key: aws.String("x/2")}, {Key: aws.String("x/3")}, {Key: aws.String("x/never-existed")},
	}}})
	if err != nil {
		t.Fatalf("delete objects: %v", err)
	}
	var deleted []string
	for _, d := range out.Deleted {
		deleted = append(deleted, aws.ToString(d.Key))
	}
	slices.Sort(deleted)
	if !slices.Equal(deleted, []string{"x/1", "x/2", "x/3", "x/never-existed"}) || len(out.Errors) != 0 {
		t.Errorf("delete objects: deleted %v errors %d", deleted, len(out.Errors))
	}
	tr.add("delete objects: %v errors=%d", deleted, len(out.Errors))
	v2, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String("x/")})
	if err != nil {
		t.Fatalf("list after delete objects: %v", err)
	}
	if keys := objectKeys(v2.Contents); !slices.Equal(keys, []string{"x/4", "x/5"}) {
		t.Errorf("after delete objects, x/ holds %v", keys)
	}

	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String("top.txt")}); err != nil {
		t.Fatalf("delete object: %v", err)
	}
	requireMissing(t, ctx, c, bucket, "top.txt")
	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("top.txt")})
	RequireS3Error(t, err, 404, "NoSuchKey")
	// Deleting what is not there succeeds, as on S3.
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String("top.txt")}); err != nil {
		t.Errorf("delete of a missing key: %v", err)
	}
	tr.add("delete object ok")
}

const partSize = 5 << 20

func multipart(t *testing.T, ctx context.Context, c *s3.Client, bucket string, tr *transcript, copied []byte) {
	key := "big/multi.bin"
	created, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key),
		ContentType: aws.String("application/x-multi"), Metadata: map[string]string{"origin": "multipart"}})
	if err != nil {
		t.Fatalf("create multipart upload: %v", err)
	}
	uploadID := created.UploadId
	part1, part2 := PatternBytes(11, partSize), PatternBytes(12, partSize)
	var completed []types.CompletedPart
	for i, part := range [][]byte{part1, part2} {
		out, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: uploadID,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(part)})
		if err != nil {
			t.Fatalf("upload part %d: %v", i+1, err)
		}
		completed = append(completed, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(int32(i + 1))})
		tr.add("part %d etag=%s", i+1, aws.ToString(out.ETag))
	}
	cp, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: uploadID,
		PartNumber: aws.Int32(3), CopySource: aws.String(bucket + "/dir/a.txt"), CopySourceRange: aws.String("bytes=0-499")})
	if err != nil {
		t.Fatalf("upload part copy: %v", err)
	}
	completed = append(completed, types.CompletedPart{ETag: cp.CopyPartResult.ETag, PartNumber: aws.Int32(3)})
	tr.add("part 3 (copy) etag=%s", aws.ToString(cp.CopyPartResult.ETag))

	parts, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: uploadID})
	if err != nil {
		t.Fatalf("list parts: %v", err)
	}
	var sizes []int64
	for _, p := range parts.Parts {
		sizes = append(sizes, aws.ToInt64(p.Size))
	}
	if !slices.Equal(sizes, []int64{partSize, partSize, 500}) {
		t.Errorf("list parts sizes %v", sizes)
	}
	tr.add("parts %v", sizes)

	uploads, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatalf("list multipart uploads: %v", err)
	}
	if len(uploads.Uploads) != 1 || aws.ToString(uploads.Uploads[0].Key) != key || aws.ToString(uploads.Uploads[0].UploadId) != aws.ToString(uploadID) {
		t.Errorf("list multipart uploads: %d uploads", len(uploads.Uploads))
	}
	tr.add("uploads %d", len(uploads.Uploads))
	requireMissing(t, ctx, c, bucket, key) // not completed: does not exist

	done, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key),
		UploadId: uploadID, MultipartUpload: &types.CompletedMultipartUpload{Parts: completed}})
	if err != nil {
		t.Fatalf("complete multipart upload: %v", err)
	}
	if !strings.HasSuffix(unquote(done.ETag), "-3") {
		t.Errorf("multipart etag %s does not end in -3", aws.ToString(done.ETag))
	}
	tr.add("complete etag=%s", aws.ToString(done.ETag))
	want := slices.Concat(part1, part2, copied[:500])
	if got := getBytes(t, ctx, c, bucket, key); !bytes.Equal(got, want) {
		t.Errorf("multipart object: %d bytes differ from the %d uploaded", len(got), len(want))
	}
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("head multipart object: %v", err)
	}
	if head.Metadata["origin"] != "multipart" || aws.ToString(head.ContentType) != "application/x-multi" {
		t.Errorf("multipart object lost attributes: %v %s", head.Metadata, aws.ToString(head.ContentType))
	}
	tr.add("multipart head len=%d meta=%v", aws.ToInt64(head.ContentLength), sortedMap(head.Metadata))

	aborted, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String("big/aborted.bin")})
	if err != nil {
		t.Fatalf("create second multipart upload: %v", err)
	}
	if _, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String("big/aborted.bin"),
		UploadId: aborted.UploadId, PartNumber: aws.Int32(1), Body: strings.NewReader("abandoned")}); err != nil {
		t.Fatalf("upload part to be aborted: %v", err)
	}
	if _, err := c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String("big/aborted.bin"), UploadId: aborted.UploadId}); err != nil {
		t.Fatalf("abort multipart upload: %v", err)
	}
	_, err = c.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String(bucket), Key: aws.String("big/aborted.bin"), UploadId: aborted.UploadId})
	RequireS3Error(t, err, 404, "NoSuchUpload")
	requireNoUploads(t, ctx, c, bucket)
	requireMissing(t, ctx, c, bucket, "big/aborted.bin")
	tr.add("abort ok")
}

func deleteBucket(t *testing.T, ctx context.Context, c *s3.Client, bucket string, tr *transcript) {
	_, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)})
	RequireS3Error(t, err, 409, "BucketNotEmpty")
	tr.add("delete non-empty bucket -> %d %s", HTTPStatus(err), ErrorCode(err))
	out, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatalf("list before emptying: %v", err)
	}
	for _, o := range out.Contents {
		if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: o.Key}); err != nil {
			t.Fatalf("empty bucket: delete %s: %v", aws.ToString(o.Key), err)
		}
	}
	if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("delete bucket: %v", err)
	}
	_, err = c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)})
	RequireS3Error(t, err, 404, "")
	tr.add("delete bucket ok")
}

func objectKeys(objs []types.Object) []string {
	keys := make([]string, 0, len(objs))
	for _, o := range objs {
		keys = append(keys, aws.ToString(o.Key))
	}
	return keys
}

func commonPrefixes(ps []types.CommonPrefix) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, aws.ToString(p.Prefix))
	}
	return out
}

func sortedMap(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k+"="+m[k])
	}
	return out
}

package probe

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// staleETag is an ETag no object has: a mismatch for every If-Match case.
const staleETag = `"00000000000000000000000000000000"`

func unquoted(etag string) string { return strings.Trim(etag, `"`) }

func checks() []check {
	return []check{
		{name: PutIfNoneMatch, cases: putIfNoneMatchCases()},
		{name: PutIfMatch, cases: putIfMatchCases()},
		{name: CopyIfNoneMatch, cases: copyIfNoneMatchCases()},
		{name: CopyIfMatch, cases: copyIfMatchCases()},
		{name: CompleteIfNoneMatch, cases: completeIfNoneMatchCases()},
		{name: CompleteIfMatch, cases: completeIfMatchCases()},
		{name: DeleteIfMatch, cases: deleteIfMatchCases()},
		{name: DeleteObjectsETag, cases: deleteObjectsCases()},
		{name: ReadConditions, cases: readCases()},
		{name: CopySourceCondition, cases: copySourceCases()},
	}
}

func ifNoneMatchAll(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") }

func putIfNoneMatchCases() []probeCase {
	return []probeCase{
		{name: "create on a missing key", want: []int{200}, run: func(ctx context.Context, s *store) (outcome, error) {
			return s.put(ctx, s.c(), s.key("create"), "new", ifNoneMatchAll), nil
		}},
		{name: "create on an existing key", want: []int{412}, run: func(ctx context.Context, s *store) (outcome, error) {
			key := s.key("exists")
			if _, err := s.seed(ctx, key, "old"); err != nil {
				return outcome{}, err
			}
			return s.put(ctx, s.c(), key, "new", ifNoneMatchAll), nil
		}},
	}
}

// ifMatchPut seeds a key, then PUTs with If-Match: etagFor(seeded ETag).
func ifMatchPut(etagFor func(string) string) func(ctx context.Context, s *store) (outcome, error) {
	return func(ctx context.Context, s *store) (outcome, error) {
		key := s.key("cas")
		etag, err := s.seed(ctx, key, "old")
		if err != nil {
			return outcome{}, err
		}
		return s.put(ctx, s.c(), key, "new", func(in *s3.PutObjectInput) { in.IfMatch = aws.String(etagFor(etag)) }), nil
	}
}

func putIfMatchCases() []probeCase {
	return []probeCase{
		{name: "quoted ETag that matches", want: []int{200}, run: ifMatchPut(func(e string) string { return `"` + unquoted(e) + `"` })},
		{name: "unquoted ETag that matches", want: []int{200}, run: ifMatchPut(unquoted)},
		// S3 does not document If-Match: * on PutObject; versitygw and moto answer
		// 412 (a literal ETag "*"), which loses no write, so both answers pass.
		{name: "* on an existing key", want: []int{200, 412}, run: ifMatchPut(func(string) string { return "*" })},
		{name: "ETag that does not match", want: []int{412}, run: ifMatchPut(func(string) string { return staleETag })},
		{name: "missing key", want: []int{404, 412}, run: func(ctx context.Context, s *store) (outcome, error) {
			return s.put(ctx, s.c(), s.key("missing"), "new", func(in *s3.PutObjectInput) { in.IfMatch = aws.String(staleETag) }), nil
		}},
	}
}

// copyOnto copies a fresh source onto a destination (seeded when seedDst),
// with the destination condition edit makes from the destination's ETag.
func copyOnto(seedDst bool, edit func(in *s3.CopyObjectInput, dstETag string)) func(ctx context.Context, s *store) (outcome, error) {
	return func(ctx context.Context, s *store) (outcome, error) {
		src, dst := s.key("copy-src"), s.key("copy-dst")
		if _, err := s.seed(ctx, src, "source"); err != nil {
			return outcome{}, err
		}
		var dstETag string
		if seedDst {
			e, err := s.seed(ctx, dst, "old")
			if err != nil {
				return outcome{}, err
			}
			dstETag = e
		}
		return s.copyTo(ctx, s.c(), src, dst, func(in *s3.CopyObjectInput) { edit(in, dstETag) }), nil
	}
}

func copyIfNoneMatchCases() []probeCase {
	star := func(in *s3.CopyObjectInput, _ string) { in.IfNoneMatch = aws.String("*") }
	return []probeCase{
		{name: "copy onto a missing key", want: []int{200}, run: copyOnto(false, star)},
		{name: "copy onto an existing key", want: []int{412}, run: copyOnto(true, star)},
	}
}

func copyIfMatchCases() []probeCase {
	return []probeCase{
		{name: "ETag that matches", want: []int{200}, run: copyOnto(true, func(in *s3.CopyObjectInput, e string) { in.IfMatch = aws.String(e) })},
		{name: "ETag that does not match", want: []int{412}, run: copyOnto(true, func(in *s3.CopyObjectInput, _ string) { in.IfMatch = aws.String(staleETag) })},
		{name: "missing key", want: []int{404, 412}, run: copyOnto(false, func(in *s3.CopyObjectInput, _ string) { in.IfMatch = aws.String(staleETag) })},
	}
}

// completeOnto completes an upload onto a key (seeded when seedDst) with
// the condition edit makes from the existing object's ETag.
func completeOnto(seedDst bool, edit func(in *s3.CompleteMultipartUploadInput, etag string)) func(ctx context.Context, s *store) (outcome, error) {
	return func(ctx context.Context, s *store) (outcome, error) {
		key := s.key("complete")
		var etag string
		if seedDst {
			e, err := s.seed(ctx, key, "old")
			if err != nil {
				return outcome{}, err
			}
			etag = e
		}
		in, err := s.startUpload(ctx, s.c(), key, "part of "+key)
		if err != nil {
			return outcome{}, err
		}
		edit(in, etag)
		return s.complete(ctx, s.c(), in), nil
	}
}

func completeIfNoneMatchCases() []probeCase {
	star := func(in *s3.CompleteMultipartUploadInput, _ string) { in.IfNoneMatch = aws.String("*") }
	return []probeCase{
		{name: "complete onto a missing key", want: []int{200}, run: completeOnto(false, star)},
		{name: "complete onto an existing key", want: []int{412}, run: completeOnto(true, star)},
	}
}

func completeIfMatchCases() []probeCase {
	return []probeCase{
		{name: "ETag that matches", want: []int{200}, run: completeOnto(true, func(in *s3.CompleteMultipartUploadInput, e string) { in.IfMatch = aws.String(e) })},
		{name: "ETag that does not match", want: []int{412}, run: completeOnto(true, func(in *s3.CompleteMultipartUploadInput, _ string) { in.IfMatch = aws.String(staleETag) })},
		{name: "missing key", want: []int{404, 412}, run: completeOnto(false, func(in *s3.CompleteMultipartUploadInput, _ string) { in.IfMatch = aws.String(staleETag) })},
	}
}

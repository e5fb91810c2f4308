package probe

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// deleteSeeded seeds a key and deletes it with the condition edit makes
// from its ETag. A 2xx that left the object in place counts as the
// condition honoured with the wrong status, not as ignored.
func deleteSeeded(edit func(in *s3.DeleteObjectInput, etag string)) func(ctx context.Context, s *store) (outcome, error) {
	return func(ctx context.Context, s *store) (outcome, error) {
		key := s.key("delete")
		etag, err := s.seed(ctx, key, "old")
		if err != nil {
			return outcome{}, err
		}
		return s.deleteObject(ctx, s.c(), key, func(in *s3.DeleteObjectInput) { edit(in, etag) }), nil
	}
}

func deleteIfMatchCases() []probeCase {
	longAgo := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	return []probeCase{
		{name: "ETag that matches", want: []int{204}, run: deleteSeeded(func(in *s3.DeleteObjectInput, e string) { in.IfMatch = aws.String(e) })},
		{name: "ETag that does not match", want: []int{412}, run: deleteSeeded(func(in *s3.DeleteObjectInput, _ string) { in.IfMatch = aws.String(staleETag) })},
		// S3 answers 404 NoSuchKey (measured); 412 loses nothing either. A
		// 204 tells a second deleter of one version that it deleted it.
		{name: "missing key", want: []int{404, 412}, run: func(ctx context.Context, s *store) (outcome, error) {
			return s.deleteObject(ctx, s.c(), s.key("delete-missing"), func(in *s3.DeleteObjectInput) { in.IfMatch = aws.String(staleETag) }), nil
		}},
		{name: "x-amz-if-match-size that does not match", want: []int{412}, run: deleteSeeded(func(in *s3.DeleteObjectInput, _ string) { in.IfMatchSize = aws.Int64(999999) })},
		{name: "x-amz-if-match-last-modified-time that does not match", want: []int{412}, run: deleteSeeded(func(in *s3.DeleteObjectInput, _ string) {
			in.IfMatchLastModifiedTime = aws.Time(longAgo)
		})},
	}
}

// deleteSeededEntry deletes one seeded key through DeleteObjects with the
// entry ETag etagFor makes; the outcome is 204 when the key is gone, 412
// when it is still there and the entry reported PreconditionFailed.
func deleteSeededEntry(etagFor func(string) string) func(ctx context.Context, s *store) (outcome, error) {
	return func(ctx context.Context, s *store) (outcome, error) {
		key := s.key("delete-entry")
		etag, err := s.seed(ctx, key, "old")
		if err != nil {
			return outcome{}, err
		}
		reported := s.deleteEntry(ctx, s.c(), key, etagFor(etag))
		if reported.err != nil {
			return reported, nil
		}
		present, err := s.exists(ctx, key)
		switch {
		case err != nil:
			return outcome{}, err
		case !present:
			return outcome{status: 204}, nil
		case reported.status == 200:
			return outcome{status: 200, code: "reported deleted, still there"}, nil
		}
		return reported, nil
	}
}

func deleteObjectsCases() []probeCase {
	return []probeCase{
		{name: "entry ETag that matches", want: []int{204}, run: deleteSeededEntry(func(e string) string { return e })},
		{name: "entry ETag that does not match", want: []int{412}, run: deleteSeededEntry(func(string) string { return staleETag })},
	}
}

package probe

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// pastTime is before any object the probe writes.
var pastTime = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)

// seeded is an object the probe wrote, as a HEAD reports it.
type seeded struct {
	key, etag string
	modified  time.Time
}

// seedAndHead writes key and HEADs it for its ETag and Last-Modified
// (an If-Modified-Since of its own Last-Modified is "not modified", while a
// date in the future is one HTTP says to ignore).
func seedAndHead(ctx context.Context, s *store, key string) (seeded, error) {
	if _, err := s.seed(ctx, key, "body"); err != nil {
		return seeded{}, err
	}
	h := s.head(ctx, key, nil)
	if h.status != 200 {
		return seeded{}, errors.New("HEAD " + key + ": " + h.String())
	}
	return seeded{key: key, etag: h.etag, modified: h.modified}, nil
}

// readSeeded seeds a key and reads it with the request read makes.
func readSeeded(read func(ctx context.Context, s *store, o seeded) outcome) func(ctx context.Context, s *store) (outcome, error) {
	return func(ctx context.Context, s *store) (outcome, error) {
		o, err := seedAndHead(ctx, s, s.key("read"))
		if err != nil {
			return outcome{}, err
		}
		return read(ctx, s, o), nil
	}
}

func getWith(edit func(in *s3.GetObjectInput, o seeded)) func(context.Context, *store, seeded) outcome {
	return func(ctx context.Context, s *store, o seeded) outcome {
		return s.get(ctx, o.key, func(in *s3.GetObjectInput) { edit(in, o) })
	}
}

func headWith(edit func(in *s3.HeadObjectInput, o seeded)) func(context.Context, *store, seeded) outcome {
	return func(ctx context.Context, s *store, o seeded) outcome {
		return s.head(ctx, o.key, func(in *s3.HeadObjectInput) { edit(in, o) })
	}
}

func readCases() []probeCase {
	return []probeCase{
		{name: "GET If-Match stale", want: []int{412}, run: readSeeded(getWith(func(in *s3.GetObjectInput, _ seeded) { in.IfMatch = aws.String(staleETag) }))},
		{name: "HEAD If-Match stale", want: []int{412}, run: readSeeded(headWith(func(in *s3.HeadObjectInput, _ seeded) { in.IfMatch = aws.String(staleETag) }))},
		{name: "GET If-Match current", want: []int{200}, run: readSeeded(getWith(func(in *s3.GetObjectInput, o seeded) { in.IfMatch = aws.String(o.etag) }))},
		{name: "GET If-None-Match current", want: []int{304}, run: readSeeded(getWith(func(in *s3.GetObjectInput, o seeded) { in.IfNoneMatch = aws.String(o.etag) }))},
		{name: "HEAD If-None-Match current", want: []int{304}, run: readSeeded(headWith(func(in *s3.HeadObjectInput, o seeded) { in.IfNoneMatch = aws.String(o.etag) }))},
		{name: "GET If-Modified-Since its Last-Modified", want: []int{304}, run: readSeeded(getWith(func(in *s3.GetObjectInput, o seeded) { in.IfModifiedSince = aws.Time(o.modified) }))},
		{name: "GET If-Unmodified-Since past", want: []int{412}, run: readSeeded(getWith(func(in *s3.GetObjectInput, _ seeded) { in.IfUnmodifiedSince = aws.Time(pastTime) }))},
	}
}

func copySource(edit func(in *s3.CopyObjectInput, src seeded)) func(ctx context.Context, s *store) (outcome, error) {
	return func(ctx context.Context, s *store) (outcome, error) {
		src, err := seedAndHead(ctx, s, s.key("copy-source"))
		if err != nil {
			return outcome{}, err
		}
		return s.copyTo(ctx, s.c(), src.key, s.key("copy-target"), func(in *s3.CopyObjectInput) { edit(in, src) }), nil
	}
}

func copySourceCases() []probeCase {
	return []probeCase{
		{name: "x-amz-copy-source-if-match current", want: []int{200}, run: copySource(func(in *s3.CopyObjectInput, o seeded) { in.CopySourceIfMatch = aws.String(o.etag) })},
		{name: "x-amz-copy-source-if-match stale", want: []int{412}, run: copySource(func(in *s3.CopyObjectInput, _ seeded) { in.CopySourceIfMatch = aws.String(staleETag) })},
		{name: "x-amz-copy-source-if-none-match current", want: []int{412}, run: copySource(func(in *s3.CopyObjectInput, o seeded) { in.CopySourceIfNoneMatch = aws.String(o.etag) })},
		{name: "x-amz-copy-source-if-unmodified-since past", want: []int{412}, run: copySource(func(in *s3.CopyObjectInput, _ seeded) {
			in.CopySourceIfUnmodifiedSince = aws.Time(pastTime)
		})},
		{name: "x-amz-copy-source-if-modified-since its Last-Modified", want: []int{412}, run: copySource(func(in *s3.CopyObjectInput, o seeded) {
			in.CopySourceIfModifiedSince = aws.Time(o.modified)
		})},
	}
}

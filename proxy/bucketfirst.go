package proxy

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/s3err"
)

// bucketCheckTimeout bounds the HeadBucket asked on the error path: the
// request fails either way, and a slow store must not hold its answer up.
const bucketCheckTimeout = 2 * time.Second

// validationCodes are the codes of s3cond's own checks of a request's
// headers and body (and of a precondition it evaluates itself, which reads
// a missing bucket's object as a missing object). S3 checks that the bucket
// exists before any of these, so a request for a bucket that does not exist
// gets NoSuchBucket from S3. Authentication and authorisation codes are not
// here (S3 answers those first), nor are 405/501 refusals of requests
// s3cond does not forward, nor the store's own answers.
var validationCodes = map[s3err.Code]bool{
	s3err.InvalidArgument:           true,
	s3err.InvalidRequest:            true,
	s3err.InvalidDigest:             true,
	s3err.BadDigest:                 true,
	s3err.XAmzContentSHA256Mismatch: true,
	s3err.IncompleteBody:            true,
	s3err.MalformedXML:              true,
	s3err.MalformedTrailerError:     true,
	s3err.MissingContentLength:      true,
	s3err.EntityTooLarge:            true,
	s3err.EntityTooSmall:            true,
	s3err.KeyTooLongError:           true,
	s3err.UnexpectedContent:         true,
	s3err.NoSuchKey:                 true,
}

// inS3Order replaces an error of s3cond's own by the one S3 would have
// answered first, asking the store where s3cond does not know (this path
// only: a request that passes s3cond's checks never pays for it).
func (p *Proxy) inS3Order(c *call, e *s3err.Error) *s3err.Error {
	if e = p.orNoSuchBucket(c, e); e.Code == s3err.NoSuchBucket {
		return e
	}
	return p.orChecksumTypeMismatch(c, e)
}

// orNoSuchBucket keeps S3's order of checks (authentication, then the
// bucket, then headers, then the body) on the error path only: before
// s3cond answers one of its own validation errors for a bucket the key may
// read, it asks the store whether that bucket exists, and answers
// NoSuchBucket if the store says it does not. Requests that pass s3cond's
// checks never pay for it. Any other answer of the store, or none in time,
// leaves e as it is.
func (p *Proxy) orNoSuchBucket(c *call, e *s3err.Error) *s3err.Error {
	if !p.asksForBucket(c, e) {
		return e
	}
	ctx, cancel := context.WithTimeout(c.r.Context(), bucketCheckTimeout)
	defer cancel()
	if missing, err := c.backend.bucketMissing(ctx, c.target.Bucket); err != nil || !missing {
		return e
	}
	return s3err.New(s3err.NoSuchBucket).With("BucketName", c.target.Bucket)
}

// asksForBucket says whether e, answered to c, calls for the bucket check:
// one of s3cond's validation errors, on a request it routed (a refused one
// may name a bucket that is a store's admin API), that names an existing
// bucket by its nature (not CreateBucket), made by a known key that may
// read the bucket (so nobody learns of a bucket they have no grant on).
func (p *Proxy) asksForBucket(c *call, e *s3err.Error) bool {
	switch {
	case !validationCodes[e.Code], c.auth == nil, c.target.Bucket == "",
		c.op == operation.Refused, c.op == "", c.op == operation.CreateBucket:
		return false
	case c.auth.Anonymous:
		return p.anonymousRead(c.target.Bucket)
	}
	return p.access.Allowed(c.auth.AccessKeyID, c.target.Bucket, false)
}

// bucketMissing asks the store, with HeadBucket signed like every backend
// request, whether a client bucket does not exist. Only a 404 says so.
func (b *Backend) bucketMissing(ctx context.Context, bucket string) (bool, error) {
	resp, err := b.send(b.newRequest(ctx, http.MethodHead, bucket, "", "", nil))
	if err != nil {
		return false, backendError(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusNotFound, nil
}

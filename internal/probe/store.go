package probe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// store is the bucket under probe, reached through two clients with
// separate connection pools, so that a store serialising requests per
// connection does not pass a race by accident.
type store struct {
	clients [2]*s3.Client
	pools   [2]*http.Client
	bucket  string
	prefix  string
	writers int
	// firstWriters race the first round (2; Options.firstRoundWriters).
	firstWriters int
	rounds       int
	// raceTime is how long a race goes on starting rounds (Options.RaceTime).
	raceTime time.Duration
	seq      atomic.Int64
	written  *scratch
}

func newStore(o Options) *store {
	s := &store{bucket: o.Bucket, prefix: o.Prefix, writers: o.Writers, firstWriters: o.firstRoundWriters, rounds: o.Rounds,
		raceTime: o.RaceTime, written: newScratch()}
	creds := o.Credentials
	if creds == nil {
		creds = credentials.NewStaticCredentialsProvider(o.AccessKeyID, o.SecretKey, "")
	}
	for i := range s.clients {
		s.pools[i] = boundedClient(o.NewHTTPClient())
		s.clients[i] = s3.New(s3.Options{
			Region:       o.Region,
			BaseEndpoint: aws.String(o.Endpoint),
			UsePathStyle: o.PathStyle,
			Credentials:  creds,
			HTTPClient:   s.pools[i],
			// One attempt: a retried 412 or a retried racing write would blur
			// what the store answered.
			RetryMaxAttempts: 1,
			// Plain signed bodies: the probe measures conditions, not
			// whether a store understands streaming checksum trailers.
			RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
			ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
		})
	}
	return s
}

// key returns a fresh key under the scratch prefix; race keys carry
// "race-" so that test fakes can force the interleaving a real racy store
// hits by chance.
func (s *store) key(kind string) string {
	return s.prefix + kind + "-" + strconv.FormatInt(s.seq.Add(1), 10)
}

func (s *store) c() *s3.Client { return s.clients[0] }

// outcome is what the store answered one request.
type outcome struct {
	status int
	code   string
	etag   string
	// modified is the Last-Modified of a HEAD's answer.
	modified time.Time
	err      error // set when no HTTP answer came (network, timeout)
}

func (o outcome) String() string {
	if o.err != nil {
		return "error: " + o.err.Error()
	}
	if o.code != "" {
		return strconv.Itoa(o.status) + " " + o.code
	}
	return strconv.Itoa(o.status)
}

// answered turns an SDK result into an outcome: ok is the status on success.
func answered(ok int, etag *string, err error) outcome {
	if err == nil {
		return outcome{status: ok, etag: aws.ToString(etag)}
	}
	var o outcome
	var status interface{ HTTPStatusCode() int }
	if errors.As(err, &status) {
		o.status = status.HTTPStatusCode()
	}
	if o.status == 0 {
		o.err = err
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		o.code = api.ErrorCode()
	}
	return o
}

func (s *store) put(ctx context.Context, c *s3.Client, key, body string, edit func(*s3.PutObjectInput)) outcome {
	in := &s3.PutObjectInput{Bucket: &s.bucket, Key: &key, Body: bytes.NewReader([]byte(body)), ContentLength: aws.Int64(int64(len(body)))}
	if edit != nil {
		edit(in)
	}
	s.written.wrote(key)
	out, err := c.PutObject(ctx, in)
	if err != nil {
		return answered(0, nil, err)
	}
	s.written.stored(key, aws.ToString(out.VersionId))
	return answered(200, out.ETag, nil)
}

// seed creates key with body unconditionally and returns its ETag.
func (s *store) seed(ctx context.Context, key, body string) (string, error) {
	o := s.put(ctx, s.c(), key, body, nil)
	if o.status != 200 {
		return "", errors.New("seed PUT " + key + ": " + o.String())
	}
	if o.etag == "" {
		h := s.head(ctx, key, nil)
		if h.status != 200 {
			return "", errors.New("seed HEAD " + key + ": " + h.String())
		}
		return h.etag, nil
	}
	return o.etag, nil
}

func (s *store) head(ctx context.Context, key string, edit func(*s3.HeadObjectInput)) outcome {
	in := &s3.HeadObjectInput{Bucket: &s.bucket, Key: &key}
	if edit != nil {
		edit(in)
	}
	out, err := s.c().HeadObject(ctx, in)
	if err != nil {
		return answered(0, nil, err)
	}
	o := answered(200, out.ETag, nil)
	o.modified = aws.ToTime(out.LastModified)
	return o
}

// exists reports whether key is there (HEAD 200).
func (s *store) exists(ctx context.Context, key string) (bool, error) {
	o := s.head(ctx, key, nil)
	switch {
	case o.status == 200:
		return true, nil
	case o.status == 404:
		return false, nil
	}
	return false, errors.New("HEAD " + key + ": " + o.String())
}

func (s *store) get(ctx context.Context, key string, edit func(*s3.GetObjectInput)) outcome {
	in := &s3.GetObjectInput{Bucket: &s.bucket, Key: &key}
	if edit != nil {
		edit(in)
	}
	out, err := s.c().GetObject(ctx, in)
	if err != nil {
		return answered(0, nil, err)
	}
	out.Body.Close()
	return answered(200, out.ETag, nil)
}

// maxRaceBody bounds what body reads of a race key: every racer writes
// under 200 bytes.
const maxRaceBody = 1 << 10

// body reads key's body (at most maxRaceBody bytes) and its status: 200
// with the body, 404 without; any other answer is an error.
func (s *store) body(ctx context.Context, key string) (string, int, error) {
	out, err := s.c().GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		if o := answered(0, nil, err); o.status == 404 {
			return "", 404, nil
		}
		return "", 0, fmt.Errorf("GET %s: %w", key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(io.LimitReader(out.Body, maxRaceBody))
	if err != nil {
		return "", 0, fmt.Errorf("GET %s: %w", key, err)
	}
	return string(data), 200, nil
}

func (s *store) copyTo(ctx context.Context, c *s3.Client, src, dst string, edit func(*s3.CopyObjectInput)) outcome {
	source := s.bucket + "/" + src
	in := &s3.CopyObjectInput{Bucket: &s.bucket, Key: &dst, CopySource: &source}
	if edit != nil {
		edit(in)
	}
	s.written.wrote(dst)
	out, err := c.CopyObject(ctx, in)
	if err != nil {
		return answered(0, nil, err)
	}
	s.written.stored(dst, aws.ToString(out.VersionId))
	var etag *string
	if out.CopyObjectResult != nil {
		etag = out.CopyObjectResult.ETag
	}
	return answered(200, etag, nil)
}

func (s *store) deleteObject(ctx context.Context, c *s3.Client, key string, edit func(*s3.DeleteObjectInput)) outcome {
	in := &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key}
	if edit != nil {
		edit(in)
	}
	_, err := c.DeleteObject(ctx, in)
	return answered(204, nil, err)
}

// deleteEntry deletes key through DeleteObjects with an entry ETag. The
// outcome is what the answer reports: 200 when the entry is deleted, 412
// when it failed PreconditionFailed, 400 with the code for another error.
func (s *store) deleteEntry(ctx context.Context, c *s3.Client, key, etag string) outcome {
	out, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: &s.bucket, Delete: &types.Delete{
		Objects: []types.ObjectIdentifier{{Key: &key, ETag: aws.String(etag)}},
	}})
	if err != nil {
		return answered(0, nil, err)
	}
	if len(out.Errors) > 0 {
		if code := aws.ToString(out.Errors[0].Code); code != "PreconditionFailed" {
			return outcome{status: 400, code: code}
		}
		return outcome{status: 412, code: "PreconditionFailed"}
	}
	for _, d := range out.Deleted {
		if aws.ToString(d.Key) == key {
			return outcome{status: 200}
		}
	}
	return outcome{status: 500, code: "the entry is neither deleted nor an error"}
}

// startUpload creates a multipart upload of key with one part of partBody
// and returns what CompleteMultipartUpload needs.
func (s *store) startUpload(ctx context.Context, c *s3.Client, key, partBody string) (*s3.CompleteMultipartUploadInput, error) {
	created, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		return nil, errors.New("CreateMultipartUpload " + key + ": " + answered(0, nil, err).String())
	}
	s.written.started(key, aws.ToString(created.UploadId))
	body := []byte(partBody)
	part, err := c.UploadPart(ctx, &s3.UploadPartInput{
		Bucket: &s.bucket, Key: &key, UploadId: created.UploadId, PartNumber: aws.Int32(1),
		Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body))),
	})
	if err != nil {
		return nil, errors.New("UploadPart " + key + ": " + answered(0, nil, err).String())
	}
	return &s3.CompleteMultipartUploadInput{
		Bucket: &s.bucket, Key: &key, UploadId: created.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: part.ETag, PartNumber: aws.Int32(1)}}},
	}, nil
}

func (s *store) complete(ctx context.Context, c *s3.Client, in *s3.CompleteMultipartUploadInput) outcome {
	out, err := c.CompleteMultipartUpload(ctx, in)
	if err != nil {
		return answered(0, nil, err)
	}
	s.written.completed(aws.ToString(in.UploadId))
	s.written.stored(aws.ToString(in.Key), aws.ToString(out.VersionId))
	return answered(200, out.ETag, nil)
}

// close drops the pools' idle connections: the probe is done with the store.
func (s *store) close() {
	for _, p := range s.pools {
		p.CloseIdleConnections()
	}
}

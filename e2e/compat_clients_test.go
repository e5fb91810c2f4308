package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/minio/minio-go/v7"
	miniocreds "github.com/minio/minio-go/v7/pkg/credentials"
)

// compatClient is one S3 client as the compatibility matrix drives it: each
// method makes the client do one operation through its own usual interface.
// When the server answers with an S3 error the method returns a
// *clientS3Error; any other error means the client itself failed.
type compatClient interface {
	Version(t *testing.T) (string, error)
	Put(t *testing.T, bucket, key, file string, cond putCondition) error
	Get(t *testing.T, bucket, key, outFile string) error
	List(t *testing.T, bucket, prefix string) ([]string, error)
	Multipart(t *testing.T, bucket, key, file string, partSize int64) error
	Copy(t *testing.T, bucket, sourceKey, destKey string) error
	Delete(t *testing.T, bucket, key, ifMatch string) error
}

// putCondition holds the conditional headers of a put; empty means not sent.
type putCondition struct{ IfMatch, IfNoneMatch string }

// clientS3Error is an S3 error response as a client reported it. Status is 0
// when the client does not show it (the AWS CLI prints only the code).
type clientS3Error struct {
	Status int
	Code   string
	Detail string
}

func (e *clientS3Error) Error() string {
	return fmt.Sprintf("S3 error %d %s: %s", e.Status, e.Code, e.Detail)
}

// errNoConditional is what a client without conditional options returns if
// asked for one; the matrix marks those cells n/a and never asks.
var errNoConditional = errors.New("this client has no conditional-write option")

// compatEntry is one row of the matrix.
type compatEntry struct {
	name string
	// note says how the client was driven, for the reader of the document.
	note                              string
	conditionalPut, conditionalDelete bool
	open                              func(t *testing.T, e *Env) compatClient
}

func (c compatEntry) has(f compatFeature) bool {
	switch f {
	case featureConditionalPut:
		return c.conditionalPut
	case featureConditionalDelete:
		return c.conditionalDelete
	}
	return true
}

// goSDKCompat is aws-sdk-go-v2 with the defaults config.LoadDefaultConfig
// gives users (see NewS3Client).
type goSDKCompat struct{ e *Env }

func (g goSDKCompat) client(t *testing.T) *s3.Client { return g.e.Client(t, g.e.RW) }

// Version reads the SDK's User-Agent ("aws-sdk-go-v2/1.48.0 … api/s3#1.114.10"):
// a test binary carries no module versions.
func (g goSDKCompat) Version(t *testing.T) (string, error) {
	agents := &userAgents{next: http.DefaultTransport}
	c := NewS3Client(g.e.Endpoint, g.e.RW, &http.Client{Transport: agents})
	if _, err := c.ListBuckets(t.Context(), &s3.ListBucketsInput{}); err != nil {
		return "", fmt.Errorf("list buckets: %w", err)
	}
	core, service := agents.token("aws-sdk-go-v2/"), agents.token("api/s3#")
	if core == "" || service == "" {
		return "", fmt.Errorf("no SDK versions in User-Agent %q", agents.first())
	}
	return fmt.Sprintf("aws-sdk-go-v2 %s, service/s3 %s", core, service), nil
}

func (g goSDKCompat) Put(t *testing.T, bucket, key, file string, cond putCondition) error {
	f, size, err := openSized(file)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = g.client(t).PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key),
		Body: f, ContentLength: aws.Int64(size), IfMatch: optionalString(cond.IfMatch), IfNoneMatch: optionalString(cond.IfNoneMatch)})
	return sdkError(err)
}

func (g goSDKCompat) Get(t *testing.T, bucket, key, outFile string) error {
	out, err := g.client(t).GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return sdkError(err)
	}
	defer out.Body.Close()
	return writeStream(outFile, out.Body)
}

func (g goSDKCompat) List(t *testing.T, bucket, prefix string) ([]string, error) {
	var keys []string
	pages := s3.NewListObjectsV2Paginator(g.client(t), &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(t.Context())
		if err != nil {
			return nil, sdkError(err)
		}
		keys = append(keys, objectKeys(page.Contents)...)
	}
	return keys, nil
}

// Multipart uses the low-level calls: go.mod has no transfer manager, and
// these are what any Go program without one writes.
func (g goSDKCompat) Multipart(t *testing.T, bucket, key, file string, partSize int64) error {
	f, size, err := openSized(file)
	if err != nil {
		return err
	}
	defer f.Close()
	ctx, c := t.Context(), g.client(t)
	created, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return sdkError(err)
	}
	var parts []types.CompletedPart
	for off, n := int64(0), int32(1); off < size; off, n = off+partSize, n+1 {
		length := min(partSize, size-off)
		out, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: created.UploadId,
			PartNumber: aws.Int32(n), Body: io.NewSectionReader(f, off, length), ContentLength: aws.Int64(length)})
		if err != nil {
			g.abort(ctx, c, bucket, key, created.UploadId)
			return sdkError(err)
		}
		parts = append(parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(n)})
	}
	_, err = c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key),
		UploadId: created.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	if err != nil {
		g.abort(ctx, c, bucket, key, created.UploadId)
	}
	return sdkError(err)
}

func (goSDKCompat) abort(ctx context.Context, c *s3.Client, bucket, key string, uploadID *string) {
	_, _ = c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: uploadID})
}

func (g goSDKCompat) Copy(t *testing.T, bucket, sourceKey, destKey string) error {
	_, err := g.client(t).CopyObject(t.Context(), &s3.CopyObjectInput{Bucket: aws.String(bucket), Key: aws.String(destKey),
		CopySource: aws.String(bucket + "/" + sourceKey)})
	return sdkError(err)
}

func (g goSDKCompat) Delete(t *testing.T, bucket, key, ifMatch string) error {
	_, err := g.client(t).DeleteObject(t.Context(), &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key),
		IfMatch: optionalString(ifMatch)})
	return sdkError(err)
}

// sdkError turns an S3 error response into a *clientS3Error and leaves
// other errors (and nil) as they are.
func sdkError(err error) error {
	if err == nil {
		return nil
	}
	if status := HTTPStatus(err); status != 0 {
		return &clientS3Error{Status: status, Code: ErrorCode(err), Detail: err.Error()}
	}
	return err
}

// minioCompat is minio-go v7: signed aws-chunked uploads over plain HTTP.
type minioCompat struct{ e *Env }

func (m minioCompat) client() (*minio.Client, error) { return m.clientWith(http.DefaultTransport) }

func (m minioCompat) clientWith(transport http.RoundTripper) (*minio.Client, error) {
	u, err := url.Parse(m.e.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("parse endpoint: %w", err)
	}
	c, err := minio.New(u.Host, &minio.Options{Creds: miniocreds.NewStaticV4(m.e.RW.AccessKey, m.e.RW.Secret, ""),
		Secure: false, Region: Region, BucketLookup: minio.BucketLookupPath, MaxRetries: 1, Transport: transport})
	if err != nil {
		return nil, fmt.Errorf("minio client: %w", err)
	}
	return c, nil
}

// Version reads minio-go's User-Agent ("MinIO (linux; amd64) minio-go/v7.4.1"):
// a test binary carries no module versions.
func (m minioCompat) Version(t *testing.T) (string, error) {
	agents := &userAgents{next: http.DefaultTransport}
	c, err := m.clientWith(agents)
	if err != nil {
		return "", err
	}
	if _, err := c.ListBuckets(t.Context()); err != nil {
		return "", fmt.Errorf("list buckets: %w", err)
	}
	version := agents.token("minio-go/")
	if version == "" {
		return "", fmt.Errorf("no minio-go version in User-Agent %q", agents.first())
	}
	return "minio-go " + version, nil
}

// Put sends conditions with SetMatchETag (If-Match) and SetMatchETagExcept
// (If-None-Match), which add the quotes themselves.
func (m minioCompat) Put(t *testing.T, bucket, key, file string, cond putCondition) error {
	return m.put(t, bucket, key, file, cond, minio.PutObjectOptions{DisableMultipart: true})
}

func (m minioCompat) put(t *testing.T, bucket, key, file string, cond putCondition, opts minio.PutObjectOptions) error {
	c, err := m.client()
	if err != nil {
		return err
	}
	f, size, err := openSized(file)
	if err != nil {
		return err
	}
	defer f.Close()
	if cond.IfMatch != "" {
		opts.SetMatchETag(strings.Trim(cond.IfMatch, `"`))
	}
	if cond.IfNoneMatch != "" {
		opts.SetMatchETagExcept(strings.Trim(cond.IfNoneMatch, `"`))
	}
	_, err = c.PutObject(t.Context(), bucket, key, f, size, opts)
	return minioError(err)
}

func (m minioCompat) Get(t *testing.T, bucket, key, outFile string) error {
	c, err := m.client()
	if err != nil {
		return err
	}
	obj, err := c.GetObject(t.Context(), bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return minioError(err)
	}
	defer obj.Close()
	return minioError(writeStream(outFile, obj))
}

func (m minioCompat) List(t *testing.T, bucket, prefix string) ([]string, error) {
	c, err := m.client()
	if err != nil {
		return nil, err
	}
	var keys []string
	for obj := range c.ListObjects(t.Context(), bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if obj.Err != nil {
			return nil, minioError(obj.Err)
		}
		keys = append(keys, obj.Key)
	}
	return keys, nil
}

func (m minioCompat) Multipart(t *testing.T, bucket, key, file string, partSize int64) error {
	return m.put(t, bucket, key, file, putCondition{}, minio.PutObjectOptions{PartSize: uint64(partSize)})
}

func (m minioCompat) Copy(t *testing.T, bucket, sourceKey, destKey string) error {
	c, err := m.client()
	if err != nil {
		return err
	}
	_, err = c.CopyObject(t.Context(), minio.CopyDestOptions{Bucket: bucket, Object: destKey},
		minio.CopySrcOptions{Bucket: bucket, Object: sourceKey})
	return minioError(err)
}

// Delete: RemoveObjectOptions has no If-Match.
func (m minioCompat) Delete(t *testing.T, bucket, key, ifMatch string) error {
	if ifMatch != "" {
		return errNoConditional
	}
	c, err := m.client()
	if err != nil {
		return err
	}
	return minioError(c.RemoveObject(t.Context(), bucket, key, minio.RemoveObjectOptions{}))
}

func minioError(err error) error {
	if err == nil {
		return nil
	}
	if resp := minio.ToErrorResponse(err); resp.StatusCode != 0 {
		return &clientS3Error{Status: resp.StatusCode, Code: resp.Code, Detail: err.Error()}
	}
	return err
}

// userAgents records the User-Agent of every request a client sends.
type userAgents struct {
	next   http.RoundTripper
	mu     sync.Mutex
	agents []string
}

func (u *userAgents) RoundTrip(r *http.Request) (*http.Response, error) {
	u.mu.Lock()
	u.agents = append(u.agents, r.Header.Get("User-Agent"))
	u.mu.Unlock()
	return u.next.RoundTrip(r)
}

func (u *userAgents) first() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.agents) == 0 {
		return ""
	}
	return u.agents[0]
}

// token is the rest of the first User-Agent field that starts with prefix
// ("minio-go/" in "minio-go/v7.4.1" gives "v7.4.1").
func (u *userAgents) token(prefix string) string {
	for field := range strings.FieldsSeq(u.first()) {
		if version, ok := strings.CutPrefix(field, prefix); ok {
			return version
		}
	}
	return ""
}

func openSized(path string) (*os.File, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("open upload file: %w", err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("stat upload file: %w", err)
	}
	return f, info.Size(), nil
}

func writeStream(path string, body io.Reader) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create download file: %w", err)
	}
	if _, err := io.Copy(f, body); err != nil {
		f.Close()
		return fmt.Errorf("download into %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close download file: %w", err)
	}
	return nil
}

func optionalString(s string) *string {
	if s == "" {
		return nil
	}
	return aws.String(s)
}

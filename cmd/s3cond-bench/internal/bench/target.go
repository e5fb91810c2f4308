package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Endpoint says how to reach one S3 endpoint.
type Endpoint struct {
	Label     string // how reports name it, e.g. "s3cond" or "direct"
	URL       string
	AccessKey string
	SecretKey string
	Region    string
}

// Target is one endpoint ready for workloads: a client and the bucket and
// key prefix that this run writes under.
type Target struct {
	Label  string
	Client *s3.Client
	Bucket string
	// Prefix is unique to this run and target, so runs and targets sharing
	// one backend bucket never touch each other's objects.
	Prefix string
	// RSSPID, when set, is the process serving this endpoint: each workload
	// then reports its peak resident memory (Linux /proc).
	RSSPID int
}

// NewTransport returns the HTTP transport that every client of a run shares.
// The default keeps 2 idle connections per host, so more workers than that
// would open and close a connection per request and measure TCP setup.
func NewTransport(workers int) *http.Transport {
	idle := max(workers*2, 16)
	return &http.Transport{
		Proxy:               nil, // a benchmark of loopback endpoints must not detour via $HTTP_PROXY
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        idle * 2,
		MaxIdleConnsPerHost: idle,
		IdleConnTimeout:     90 * time.Second,
		// Large bodies: bigger socket-side buffers cut syscalls per MB.
		WriteBufferSize: 256 << 10,
		ReadBufferSize:  256 << 10,
	}
}

// NewClient returns a path-style S3 client for ep over transport.
//
// Retries are off: a benchmark must count every failed request, and the SDK's
// retry token bucket would otherwise throttle the workers. Response checksum
// validation happens only when required, so GET throughput measures
// transfer, not CRC computation that depends on whether the endpoint stored a
// checksum; uploads keep the SDK's default request checksums, as real clients
// send them.
func NewClient(ep Endpoint, transport http.RoundTripper) (*s3.Client, error) {
	if _, err := url.ParseRequestURI(ep.URL); err != nil {
		return nil, fmt.Errorf("endpoint %q: %w", ep.URL, err)
	}
	if ep.AccessKey == "" || ep.SecretKey == "" {
		return nil, fmt.Errorf("endpoint %s: access key and secret key are required", ep.URL)
	}
	region := ep.Region
	if region == "" {
		region = "us-east-1"
	}
	return s3.New(s3.Options{
		BaseEndpoint:               aws.String(ep.URL),
		Region:                     region,
		Credentials:                credentials.NewStaticCredentialsProvider(ep.AccessKey, ep.SecretKey, ""),
		UsePathStyle:               true,
		HTTPClient:                 &http.Client{Transport: transport},
		Retryer:                    aws.NopRetryer{},
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	}), nil
}

// EnsureBucket creates bucket unless it already exists.
func EnsureBucket(ctx context.Context, client *s3.Client, bucket string) error {
	if _, err := client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)}); err == nil {
		return nil
	} else if StatusCode(err) != http.StatusNotFound {
		return fmt.Errorf("head bucket %s: %w", bucket, err)
	}
	_, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)})
	var owned *types.BucketAlreadyOwnedByYou
	if err != nil && !errors.As(err, &owned) && ErrorCode(err) != "BucketAlreadyOwnedByYou" {
		return fmt.Errorf("create bucket %s: %w", bucket, err)
	}
	return nil
}

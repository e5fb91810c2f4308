package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// lockInfo is Terraform's statemgr.LockInfo, as it is stored in the lock
// file (same JSON field names).
type lockInfo struct {
	ID        string
	Operation string
	Info      string
	Who       string
	Version   string
	Created   time.Time
	Path      string
}

// state is the part of a Terraform state file this replay uses: serial
// counts the writes, lineage says who wrote the last one.
type state struct {
	Version int    `json:"version"`
	Serial  int    `json:"serial"`
	Lineage string `json:"lineage"`
}

// backend is the S3 state backend's RemoteClient: one state key and its
// lock file in one bucket.
type backend struct {
	s3                *s3.Client
	bucket            string
	stateKey, lockKey string
	who               string
}

// newS3Client is the client the backend builds from endpoints.s3 and
// use_path_style = true: the SDK's defaults (its retryer, checksums when
// supported), credentials from the environment (AWS_ACCESS_KEY_ID, ...).
func newS3Client(ctx context.Context, endpoint, caFile string) (*s3.Client, error) {
	var loadOpts []func(*config.LoadOptions) error
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("read CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("no certificate in %s", caFile)
		}
		transport := http.DefaultTransport.(*http.Transport).Clone()
		transport.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		loadOpts = append(loadOpts, config.WithHTTPClient(&http.Client{Transport: transport}))
	}
	cfg, err := config.LoadDefaultConfig(ctx, loadOpts...)
	if err != nil {
		return nil, fmt.Errorf("load AWS config: %w", err)
	}
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.UsePathStyle = true
	}), nil
}

// lock is lockWithFile: a conditional create of the lock file through the
// upload manager. On failure Terraform then reads the holder's info
// (lockInfo) to print "Lock Info: ..."; the caller does that.
func (b *backend) lock(ctx context.Context, info lockInfo) error {
	return b.uploadJSON(ctx, b.lockKey, info, aws.String("*"))
}

// uploadJSON puts v as JSON at key through the upload manager with a
// SHA-256 checksum, as Terraform's S3 backend writes its lock and state
// files; ifNoneMatch, if set, makes it a conditional create.
func (b *backend) uploadJSON(ctx context.Context, key string, v any, ifNoneMatch *string) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	//lint:ignore SA1019 Terraform's S3 backend sends through this manager package; the replay must send what it sends.
	_, err = manager.NewUploader(b.s3).Upload(ctx, &s3.PutObjectInput{
		ContentType:       aws.String("application/json"),
		Body:              bytes.NewReader(body),
		Bucket:            aws.String(b.bucket),
		Key:               aws.String(key),
		IfNoneMatch:       ifNoneMatch,
		ChecksumAlgorithm: s3types.ChecksumAlgorithmSha256,
	})
	return err
}

// lockInfo is getLockInfoWithFile.
func (b *backend) lockInfo(ctx context.Context) (*lockInfo, error) {
	out, err := b.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(b.lockKey)})
	if err != nil {
		return nil, fmt.Errorf("unable to retrieve the lock file: %w", err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, fmt.Errorf("read the lock file: %w", err)
	}
	info := &lockInfo{}
	if err := json.Unmarshal(data, info); err != nil {
		return nil, fmt.Errorf("unmarshal the lock file: %w", err)
	}
	return info, nil
}

// unlock is unlockWithFile: read the lock, compare its ID, then an
// unconditional DeleteObject.
func (b *backend) unlock(ctx context.Context, id string) error {
	info, err := b.lockInfo(ctx)
	if err != nil {
		return err
	}
	if info.ID != id {
		return fmt.Errorf("lock ID %q does not match the existing lock ID %q", id, info.ID)
	}
	if _, err := b.s3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(b.lockKey)}); err != nil {
		return fmt.Errorf("failed to delete the lock file: %w", err)
	}
	return nil
}

// readState is RemoteClient.get: HeadObject (404: no state yet), then the
// download manager into a buffer of the HEAD's length.
func (b *backend) readState(ctx context.Context) (*state, error) {
	head, err := b.s3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(b.stateKey)})
	if err != nil {
		var notFound *s3types.NotFound
		if errors.As(err, &notFound) {
			return &state{Version: 4}, nil
		}
		return nil, fmt.Errorf("head state: %w", err)
	}
	buf := manager.NewWriteAtBuffer(make([]byte, int(aws.ToInt64(head.ContentLength))))
	//lint:ignore SA1019 Terraform's S3 backend sends through this manager package; the replay must send what it sends.
	if _, err := manager.NewDownloader(b.s3).Download(ctx, buf, &s3.GetObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(b.stateKey)}); err != nil {
		return nil, fmt.Errorf("download state: %w", err)
	}
	st := &state{}
	if err := json.Unmarshal(buf.Bytes(), st); err != nil {
		return nil, fmt.Errorf("state is no JSON (%d bytes): %w", len(buf.Bytes()), err)
	}
	return st, nil
}

// writeState is RemoteClient.put: the upload manager, SHA-256 checksum.
func (b *backend) writeState(ctx context.Context, st *state) error {
	return b.uploadJSON(ctx, b.stateKey, st, nil)
}

package main

import (
	"bytes"
	"context"
	"crypto/md5"
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
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
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
// lock file in one bucket; with a table (dynamodb_table), its lock item
// and state digest item there.
type backend struct {
	s3                *s3.Client
	bucket            string
	stateKey, lockKey string
	who               string
	// useLockfile is use_lockfile = true: the lock file is taken.
	useLockfile bool
	// ddb and table are dynamodb_table: the lock item is taken, and the
	// state's MD5 kept and checked; nil and "" without it.
	ddb   *dynamodb.Client
	table string
	// consistency is how long a state read that does not match the digest
	// is retried (Terraform: 10 s), every consistencyPoll (2 s).
	consistency, consistencyPoll time.Duration
}

// errStaleDigest is Terraform's badChecksumError: the state read does not
// match the digest item, past the consistency wait.
var errStaleDigest = errors.New("state data in S3 does not have the expected content (the digest item names another state)")

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

// lockError is statemgr.LockError: why the lock was refused, and the
// holder's info as read after it (or why it could not be read).
type lockError struct {
	err     error
	holder  *lockInfo
	infoErr error
}

// lock is RemoteClient.Lock: the lock file alone (use_lockfile), the lock
// item alone (dynamodb_table), or both (Terraform and OpenTofu ≥ 1.10,
// with both set): first the file, then the item; if the item is refused,
// the file is unlocked again and the item's refusal is the error.
func (b *backend) lock(ctx context.Context, info lockInfo) *lockError {
	if b.useLockfile {
		if err := b.lockWithFile(ctx, info); err != nil {
			holder, infoErr := b.lockInfo(ctx)
			return &lockError{err, holder, infoErr}
		}
	}
	if b.table == "" {
		return nil
	}
	if err := b.lockWithDynamoDB(ctx, info); err != nil {
		holder, infoErr := b.lockInfoWithDynamoDB(ctx)
		if b.useLockfile {
			if uerr := b.unlockWithFile(ctx, info.ID); uerr != nil {
				err = fmt.Errorf("failed to clean up file lock after DynamoDB lock error: %v; original error: %w", uerr, err)
			}
		}
		return &lockError{err, holder, infoErr}
	}
	return nil
}

// lockWithFile is a conditional create of the lock file through the
// upload manager.
func (b *backend) lockWithFile(ctx context.Context, info lockInfo) error {
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
	return b.upload(ctx, key, body, ifNoneMatch)
}

func (b *backend) upload(ctx context.Context, key string, body []byte, ifNoneMatch *string) error {
	//lint:ignore SA1019 Terraform's S3 backend sends through this manager package; the replay must send what it sends.
	_, err := manager.NewUploader(b.s3).Upload(ctx, &s3.PutObjectInput{
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

// unlock is RemoteClient.Unlock: the file, the item, or both (each
// attempted, the errors joined).
func (b *backend) unlock(ctx context.Context, id string) error {
	var fileErr, itemErr error
	if b.useLockfile {
		fileErr = b.unlockWithFile(ctx, id)
	}
	if b.table != "" {
		itemErr = b.unlockWithDynamoDB(ctx, id)
	}
	return errors.Join(fileErr, itemErr)
}

// unlockWithFile: read the lock, compare its ID, then an unconditional
// DeleteObject.
func (b *backend) unlockWithFile(ctx context.Context, id string) error {
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

// readState is RemoteClient.Get: get, and with a table the digest check:
// a state whose MD5 is not the digest item's is read again every
// consistencyPoll until consistency has passed, then refused.
func (b *backend) readState(ctx context.Context) (*state, error) {
	deadline := time.Now().Add(b.consistency)
	for {
		data, err := b.get(ctx)
		if err != nil {
			return nil, err
		}
		if b.table == "" || b.digestMatches(ctx, data) {
			return parseState(data)
		}
		if !time.Now().Before(deadline) {
			return nil, errStaleDigest
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(b.consistencyPoll):
		}
	}
}

// digestMatches: true unless the digest item holds another MD5 than the
// state's (no state: nil). An unreadable digest counts as no digest, as
// Terraform logs it and goes on.
func (b *backend) digestMatches(ctx context.Context, data []byte) bool {
	expected, err := b.digest(ctx)
	if err != nil || len(expected) == 0 {
		return true
	}
	if data == nil {
		return false
	}
	sum := md5.Sum(data)
	return bytes.Equal(expected, sum[:])
}

// get is RemoteClient.get: HeadObject (404: no state yet, nil), then the
// download manager into a buffer of the HEAD's length.
func (b *backend) get(ctx context.Context) ([]byte, error) {
	head, err := b.s3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(b.stateKey)})
	if err != nil {
		var notFound *s3types.NotFound
		if errors.As(err, &notFound) {
			return nil, nil
		}
		return nil, fmt.Errorf("head state: %w", err)
	}
	buf := manager.NewWriteAtBuffer(make([]byte, int(aws.ToInt64(head.ContentLength))))
	//lint:ignore SA1019 Terraform's S3 backend sends through this manager package; the replay must send what it sends.
	if _, err := manager.NewDownloader(b.s3).Download(ctx, buf, &s3.GetObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(b.stateKey)}); err != nil {
		return nil, fmt.Errorf("download state: %w", err)
	}
	if len(buf.Bytes()) == 0 {
		return nil, nil
	}
	return buf.Bytes(), nil
}

func parseState(data []byte) (*state, error) {
	if data == nil {
		return &state{Version: 4}, nil
	}
	st := &state{}
	if err := json.Unmarshal(data, st); err != nil {
		return nil, fmt.Errorf("state is no JSON (%d bytes): %w", len(data), err)
	}
	return st, nil
}

// writeState is RemoteClient.put: the upload manager, SHA-256 checksum;
// with a table, then the state's MD5 into the digest item.
func (b *backend) writeState(ctx context.Context, st *state) error {
	body, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if err := b.upload(ctx, b.stateKey, body, nil); err != nil {
		return err
	}
	if b.table == "" {
		return nil
	}
	if err := b.putDigest(ctx, body); err != nil {
		return fmt.Errorf("record the state digest: %w", err)
	}
	return nil
}

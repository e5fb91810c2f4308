package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/rs/zerolog"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/dynamostore"
	"github.com/s3cond/s3cond/internal/config"
)

func newDynamoClient(ctx context.Context, cfg *config.Config) (*dynamodb.Client, error) {
	d := cfg.Lease.DynamoDB
	creds, err := credentialsProvider(ctx, d.Credentials, d.Region)
	if err != nil {
		return nil, fmt.Errorf("lease.dynamodb.credentials: %w", err)
	}
	client, err := dynamostore.NewClient(ctx, d.Region, d.Endpoint, creds)
	if err != nil {
		return nil, fmt.Errorf("lease.dynamodb: %w", err)
	}
	return client, nil
}

// CreateTable creates the DynamoDB lease table of cfg (idempotent). A TTL
// setup failure (dynalite has no UpdateTimeToLive) is a warning, not an error.
func CreateTable(ctx context.Context, cfg *config.Config, log zerolog.Logger) error {
	client, err := newDynamoClient(ctx, cfg)
	if err != nil {
		return err
	}
	err = dynamostore.CreateTable(ctx, client, cfg.Lease.DynamoDB.Table)
	if errors.Is(err, dynamostore.ErrTTLUnavailable) {
		log.Warn().Err(err).Str("table", cfg.Lease.DynamoDB.Table).
			Msg("the lease table works, but its TTL could not be enabled: lease rows stay until removed by hand")
		return nil
	}
	return err
}

// newDynamoLeaseTable is the lease table of cfg on client, its rows named
// as lease.dynamodb.key_format says. An arrow-rs keyed table refuses leases
// on other buckets than its own as unsupported: the proxy answers 501
// NotImplemented rather than the 503 of a failing store.
func newDynamoLeaseTable(client dynamostore.API, cfg *config.Config) dynamolease.Table {
	d := cfg.Lease.DynamoDB
	if d.KeyFormat != config.KeyFormatArrowRS {
		return dynamostore.New(client, d.Table)
	}
	return dynamostore.New(client, d.Table, dynamostore.WithArrowRSKeys(d.Bucket))
}

package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// ErrTTLUnavailable is wrapped by CreateTable's error when the table is
// ready but its TTL could not be enabled (dynalite has no UpdateTimeToLive).
// The table works; rows just stay until removed by hand. Callers log it as a
// warning.
var ErrTTLUnavailable = errors.New("dynamolease: could not enable TTL on the lease table")

// tableActiveWait bounds how long CreateTable waits for ACTIVE.
const tableActiveWait = 2 * time.Minute

// CreateTable creates the lease table with arrow-rs's schema if it does not
// exist (PAY_PER_REQUEST), waits until it is ACTIVE, and enables TTL on the
// ttl attribute. An existing table is fine. A table that is ready without
// TTL returns an error wrapping ErrTTLUnavailable.
func CreateTable(ctx context.Context, client API, name string) error {
	_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: aws.String(name),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(attrPath), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String(attrETag), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(attrPath), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(attrETag), KeyType: types.KeyTypeRange},
		},
		BillingMode: types.BillingModePayPerRequest,
	})
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return fmt.Errorf("create lease table %s: %w", name, err)
	}
	if err := waitActive(ctx, client, name); err != nil {
		return err
	}
	return enableTTL(ctx, client, name)
}

// TableExists reports whether the lease table exists (in any status).
func TableExists(ctx context.Context, client API, name string) (bool, error) {
	_, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	var missing *types.ResourceNotFoundException
	switch {
	case errors.As(err, &missing):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("describe lease table %s: %w", name, err)
	}
	return true, nil
}

func waitActive(ctx context.Context, client API, name string) error {
	ctx, cancel := context.WithTimeout(ctx, tableActiveWait)
	defer cancel()
	for {
		out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		if err != nil {
			return fmt.Errorf("describe lease table %s: %w", name, err)
		}
		if out.Table != nil && out.Table.TableStatus == types.TableStatusActive {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("lease table %s is not ACTIVE: %w", name, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func enableTTL(ctx context.Context, client API, name string) error {
	desc, err := client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(name)})
	if err == nil && desc.TimeToLiveDescription != nil &&
		aws.ToString(desc.TimeToLiveDescription.AttributeName) == attrTTL {
		switch desc.TimeToLiveDescription.TimeToLiveStatus {
		case types.TimeToLiveStatusEnabled, types.TimeToLiveStatusEnabling:
			return nil
		}
	}
	_, err = client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(name),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(attrTTL),
			Enabled:       aws.Bool(true),
		},
	})
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) && strings.Contains(strings.ToLower(apiErr.ErrorMessage()), "already enabled") {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w %s: %w", ErrTTLUnavailable, name, err)
	}
	return nil
}

// NewClient builds a DynamoDB client for the lease table: region,
// optional endpoint (moto, dynalite, DynamoDB Local), optional static
// credentials (nil: the default chain). Retries are few and short and each
// HTTP exchange is bounded, so an unreachable table fails fast.
func NewClient(ctx context.Context, region, endpoint string, creds aws.CredentialsProvider) (*dynamodb.Client, error) {
	opts := []func(*config.LoadOptions) error{
		config.WithRegion(region),
		// A buildable client keeps working when AWS_CA_BUNDLE is set.
		config.WithHTTPClient(awshttp.NewBuildableClient().WithTimeout(5 * time.Second)),
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = 3
				o.MaxBackoff = 200 * time.Millisecond
			})
		}),
	}
	if creds != nil {
		opts = append(opts, config.WithCredentialsProvider(creds))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("configure DynamoDB client: %w", err)
	}
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	}), nil
}

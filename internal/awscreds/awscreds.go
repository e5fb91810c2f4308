// Package awscreds turns a config's credentials block into the AWS SDK's
// credentials provider. The backend's S3 client and the DynamoDB lease
// store read the same block the same way, from internal/app and
// internal/leasestore.
package awscreds

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/s3cond/s3cond/internal/config"
)

// Provider is the provider c names: the AWS default chain (resolved for
// region), or the static key config.Load read (from the file or the
// environment).
func Provider(ctx context.Context, c config.Credentials, region string) (aws.CredentialsProvider, error) {
	switch c.Source {
	case config.CredentialsDefault:
		awsCfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion(region))
		if err != nil {
			return nil, fmt.Errorf("load the AWS default credential chain: %w", err)
		}
		return awsCfg.Credentials, nil
	default: // static, and env (Load already read the variables)
		return credentials.NewStaticCredentialsProvider(c.AccessKeyID, c.SecretAccessKey, ""), nil
	}
}

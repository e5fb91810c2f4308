package main

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// digestSuffix names the item that holds the state's MD5 beside the lock
// item (Terraform's stateIDSuffix).
const digestSuffix = "-md5"

// newDynamoDBClient is the client the backend builds from
// endpoints.dynamodb: the SDK's defaults, credentials from the environment.
func newDynamoDBClient(ctx context.Context, endpoint string) (*dynamodb.Client, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("load AWS config: %w", err)
	}
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(endpoint) }), nil
}

// lockPath is the lock item's LockID: <bucket>/<state key>.
func (b *backend) lockPath() string { return b.bucket + "/" + b.stateKey }

func (b *backend) itemKey(id string) map[string]ddbtypes.AttributeValue {
	return map[string]ddbtypes.AttributeValue{"LockID": &ddbtypes.AttributeValueMemberS{Value: id}}
}

// lockWithDynamoDB is the lock item's PutItem: LockID and Info (the
// LockInfo as JSON), on condition attribute_not_exists(LockID).
func (b *backend) lockWithDynamoDB(ctx context.Context, info lockInfo) error {
	body, err := json.Marshal(info)
	if err != nil {
		return err
	}
	_, err = b.ddb.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(b.table),
		Item: map[string]ddbtypes.AttributeValue{
			"LockID": &ddbtypes.AttributeValueMemberS{Value: b.lockPath()},
			"Info":   &ddbtypes.AttributeValueMemberS{Value: string(body)},
		},
		ConditionExpression: aws.String("attribute_not_exists(LockID)"),
	})
	return err
}

// lockInfoWithDynamoDB is getLockInfoWithDynamoDB: a consistent GetItem of
// the lock item's LockID and Info.
func (b *backend) lockInfoWithDynamoDB(ctx context.Context) (*lockInfo, error) {
	out, err := b.ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(b.table), Key: b.itemKey(b.lockPath()),
		ProjectionExpression: aws.String("LockID, Info"), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("unable to retrieve item from DynamoDB table %q: %w", b.table, err)
	}
	var data string
	if v, ok := out.Item["Info"].(*ddbtypes.AttributeValueMemberS); ok {
		data = v.Value
	}
	info := &lockInfo{}
	if err := json.Unmarshal([]byte(data), info); err != nil {
		return nil, fmt.Errorf("unmarshal the lock item's Info: %w", err)
	}
	return info, nil
}

// unlockWithDynamoDB is Terraform's: read the item's Info, compare the
// lock ID, then an unconditional DeleteItem (OpenTofu conditions its
// DeleteItem on the Info it read).
func (b *backend) unlockWithDynamoDB(ctx context.Context, id string) error {
	info, err := b.lockInfoWithDynamoDB(ctx)
	if err != nil {
		return fmt.Errorf("failed to retrieve lock info for lock ID %q: %w", id, err)
	}
	if info.ID != id {
		return fmt.Errorf("lock ID %q does not match existing lock (%q)", id, info.ID)
	}
	if _, err := b.ddb.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(b.table), Key: b.itemKey(b.lockPath())}); err != nil {
		return fmt.Errorf("delete the lock item: %w", err)
	}
	return nil
}

// digest is getMD5: the Digest of the <LockID>-md5 item, hex-decoded. An
// absent or unreadable item is an error, which Terraform logs and ignores.
func (b *backend) digest(ctx context.Context) ([]byte, error) {
	out, err := b.ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(b.table), Key: b.itemKey(b.lockPath() + digestSuffix),
		ProjectionExpression: aws.String("LockID, Digest"), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("unable to retrieve item from DynamoDB table %q: %w", b.table, err)
	}
	var val string
	if v, ok := out.Item["Digest"].(*ddbtypes.AttributeValueMemberS); ok {
		val = v.Value
	}
	sum, err := hex.DecodeString(val)
	if err != nil || len(sum) != md5.Size {
		return nil, errors.New("invalid md5")
	}
	return sum, nil
}

// putDigest is putMD5, after every state write: a PutItem of the state's
// MD5. Terraform only logs its failure; the replay reports it, so that a
// test sees it.
func (b *backend) putDigest(ctx context.Context, state []byte) error {
	sum := md5.Sum(state) // Terraform's digest is MD5: the replay must write the same.
	_, err := b.ddb.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(b.table),
		Item: map[string]ddbtypes.AttributeValue{
			"LockID": &ddbtypes.AttributeValueMemberS{Value: b.lockPath() + digestSuffix},
			"Digest": &ddbtypes.AttributeValueMemberS{Value: hex.EncodeToString(sum[:])},
		},
	})
	return err
}

// Package arrowrs replays, for tests, the DynamoDB requests of Apache
// arrow-rs object_store's DynamoCommit (object_store/src/aws/dynamo.rs,
// Apache License 2.0): the protocol is arrow-rs's, the code is s3cond's.
// Tests use it to check that s3cond and arrow-rs clients sharing a lease
// table block each other.
package arrowrs

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Commit is arrow-rs's DynamoCommit. Its try_lock is one PutItem:
//
//   - Item: path (S) = the object's Path, relative to the bucket; etag (S) =
//     the expected ETag as its HEAD reported it, or "*" for a create;
//     generation (N); timeout (N, milliseconds); ttl (N, epoch seconds, now
//   - 1 h by default). Nothing else: it has no owner and never marks a
//     row released.
//   - ConditionExpression "attribute_not_exists(#pk)" for a new lock, or
//     "attribute_exists(#pk) AND generation = :g" (:g = the generation it
//     saw) to reclaim one whose holder let timeout × max_clock_skew_rate
//     pass; ExpressionAttributeNames {"#pk": "path"}.
//   - ReturnValuesOnConditionCheckFailure ALL_OLD: on
//     ConditionalCheckFailedException it reads generation and timeout from
//     the returned item (extract_lease) and waits.
//
// It sends no GetItem, UpdateItem or DeleteItem: a lock is never released
// or renewed, and the row ages out through DynamoDB's TTL.
type Commit struct {
	Client  *dynamodb.Client
	Table   string
	Timeout time.Duration // arrow-rs's default: 20 s
	TTL     time.Duration // arrow-rs's default: 1 h
}

// New is a Commit with arrow-rs's defaults.
func New(client *dynamodb.Client, table string) Commit {
	return Commit{Client: client, Table: table, Timeout: 20 * time.Second, TTL: time.Hour}
}

// Lease is arrow-rs's Lease: what TryLock won or ran into.
type Lease struct {
	Generation uint64
	Timeout    time.Duration
}

// TryLock is arrow-rs's try_lock(client, path, etag, existing): ok reports a
// lock won; otherwise lease is the holder's, read from the returned item.
// etag "" means a create ("*").
func (c Commit) TryLock(ctx context.Context, path, etag string, existing *Lease) (lease Lease, ok bool, err error) {
	if etag == "" {
		etag = "*"
	}
	next, condition := uint64(0), "attribute_not_exists(#pk)"
	var values map[string]types.AttributeValue
	if existing != nil {
		next, condition = existing.Generation+1, "attribute_exists(#pk) AND generation = :g"
		values = map[string]types.AttributeValue{":g": number(existing.Generation)}
	}
	_, err = c.Client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                 aws.String(c.Table),
		ConditionExpression:       aws.String(condition),
		ExpressionAttributeValues: values,
		ExpressionAttributeNames:  map[string]string{"#pk": "path"},
		Item: map[string]types.AttributeValue{
			"path":       &types.AttributeValueMemberS{Value: path},
			"etag":       &types.AttributeValueMemberS{Value: etag},
			"generation": number(next),
			"timeout":    number(uint64(c.Timeout.Milliseconds())),
			"ttl":        number(uint64(time.Now().Add(c.TTL).Unix())),
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err == nil {
		return Lease{Generation: next, Timeout: c.Timeout}, true, nil
	}
	var conflict *types.ConditionalCheckFailedException
	if !errors.As(err, &conflict) {
		return Lease{}, false, fmt.Errorf("arrow-rs try_lock %q %q: %w", path, etag, err)
	}
	held, err := extractLease(conflict.Item)
	return held, false, err
}

// extractLease is arrow-rs's extract_lease: generation and timeout must
// both be numbers.
func extractLease(item map[string]types.AttributeValue) (Lease, error) {
	gen, genOK := item["generation"].(*types.AttributeValueMemberN)
	timeout, timeoutOK := item["timeout"].(*types.AttributeValueMemberN)
	if !genOK || !timeoutOK {
		return Lease{}, errors.New("failed to extract lease from conflict ReturnValuesOnConditionCheckFailure response")
	}
	g, err := strconv.ParseUint(gen.Value, 10, 64)
	if err != nil {
		return Lease{}, fmt.Errorf("lease generation: %w", err)
	}
	ms, err := strconv.ParseUint(timeout.Value, 10, 64)
	if err != nil {
		return Lease{}, fmt.Errorf("lease timeout: %w", err)
	}
	return Lease{Generation: g, Timeout: time.Duration(ms) * time.Millisecond}, nil
}

func number(n uint64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatUint(n, 10)}
}

package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/s3cond/s3cond/dynamolease"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// dynamoScanner is the call List needs beyond DynamoAPI; *dynamodb.Client
// has it. It is apart from DynamoAPI because the protocol never scans: a
// lease table's IAM policy may leave Scan out unless operators list leases.
type dynamoScanner interface {
	Scan(ctx context.Context, in *dynamodb.ScanInput, opts ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

// List implements dynamolease.Lister with a consistent Scan of the whole table (rows
// are partitioned by path, so no Query can select a prefix), filtered on
// the path by DynamoDB. It needs dynamodb:Scan.
func (t *Table) List(ctx context.Context, prefix string) ([]dynamolease.Record, error) {
	scanner, ok := t.client.(dynamoScanner)
	if !ok {
		return nil, errors.New("dynamolease: this DynamoDB client cannot Scan")
	}
	rowPrefix, possible := t.rowPrefix(prefix)
	if !possible {
		return nil, nil
	}
	in := &dynamodb.ScanInput{TableName: aws.String(t.name), ConsistentRead: aws.Bool(true)}
	if rowPrefix != "" {
		in.FilterExpression = aws.String("begins_with(#pk, :prefix)")
		in.ExpressionAttributeNames = map[string]string{"#pk": attrPath}
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":prefix": str(rowPrefix)}
	}
	var rows []dynamolease.Record
	for {
		callCtx, cancel := context.WithTimeout(ctx, t.callTimeout)
		out, err := scanner.Scan(callCtx, in)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("scan lease table %s: %w", t.name, err)
		}
		for _, item := range out.Items {
			r, err := decodeItem(item)
			if err != nil {
				return nil, fmt.Errorf("lease table %s: %w", t.name, err)
			}
			if t.arrowRSBucket != "" {
				r.Path = t.arrowRSBucket + "/" + r.Path
			}
			rows = append(rows, *r)
		}
		if len(out.LastEvaluatedKey) == 0 {
			break
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	rows = dynamolease.MatchingPrefix(rows, prefix)
	dynamolease.SortRecords(rows)
	return rows, nil
}

// rowPrefix is the prefix of row keys whose lease paths start with prefix;
// possible is false when no row of the table can match (an arrow-rs keyed
// table's rows are all of its one bucket).
func (t *Table) rowPrefix(prefix string) (rowPrefix string, possible bool) {
	if t.arrowRSBucket == "" {
		return prefix, true
	}
	bucketPrefix := t.arrowRSBucket + "/"
	if key, found := strings.CutPrefix(prefix, bucketPrefix); found {
		return key, true
	}
	return "", strings.HasPrefix(bucketPrefix, prefix)
}

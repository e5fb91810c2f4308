package dynamostore

import (
	"context"
	"errors"
	"fmt"

	"github.com/s3cond/s3cond/dynamolease"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ListPage implements dynamolease.PageLister with one consistent Scan of
// at most limit items (Limit counts the items read, before the prefix
// filter, so a page may hold fewer rows), resumed at ExclusiveStartKey. A
// position is the last key read, as dynamolease.RowPosition of its path
// and etag attributes.
func (t *Table) ListPage(ctx context.Context, prefix, after string, limit int) ([]dynamolease.Record, string, error) {
	scanner, ok := t.client.(dynamoScanner)
	if !ok {
		return nil, "", errors.New("dynamolease: this DynamoDB client cannot Scan")
	}
	rowPrefix, possible := t.rowPrefix(prefix)
	if !possible {
		return nil, "", nil
	}
	in := &dynamodb.ScanInput{TableName: aws.String(t.name), ConsistentRead: aws.Bool(true), Limit: aws.Int32(int32(limit))}
	if rowPrefix != "" {
		in.FilterExpression = aws.String("begins_with(#pk, :prefix)")
		in.ExpressionAttributeNames = map[string]string{"#pk": attrPath}
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":prefix": str(rowPrefix)}
	}
	if after != "" {
		path, etag, ok := dynamolease.SplitRowPosition(after)
		if !ok {
			return nil, "", dynamolease.ErrBadPosition
		}
		in.ExclusiveStartKey = map[string]types.AttributeValue{attrPath: str(path), attrETag: str(etag)}
	}
	callCtx, cancel := context.WithTimeout(ctx, t.callTimeout)
	out, err := scanner.Scan(callCtx, in)
	cancel()
	if err != nil {
		return nil, "", fmt.Errorf("scan lease table %s: %w", t.name, err)
	}
	rows := make([]dynamolease.Record, 0, len(out.Items))
	for _, item := range out.Items {
		r, err := decodeItem(item)
		if err != nil {
			return nil, "", fmt.Errorf("lease table %s: %w", t.name, err)
		}
		if t.arrowRSBucket != "" {
			r.Path = t.arrowRSBucket + "/" + r.Path
		}
		rows = append(rows, *r)
	}
	rows = dynamolease.MatchingPrefix(rows, prefix)
	return rows, lastKeyPosition(out.LastEvaluatedKey), nil
}

// lastKeyPosition is the position of a Scan's LastEvaluatedKey ("" when
// the scan is over).
func lastKeyPosition(key map[string]types.AttributeValue) string {
	path, okPath := key[attrPath].(*types.AttributeValueMemberS)
	etag, okETag := key[attrETag].(*types.AttributeValueMemberS)
	if !okPath || !okETag {
		return ""
	}
	return dynamolease.RowPosition(path.Value, etag.Value)
}

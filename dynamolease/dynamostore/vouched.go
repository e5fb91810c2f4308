package dynamostore

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/s3cond/s3cond/dynamolease"
)

// CreateOrTakeVouched implements dynamolease.VouchedTaker with one PutItem
// conditional on the row being absent, or released and recording its own
// version; ReturnValues=ALL_OLD says which. arrow-rs keyed rows carry no
// records: ErrKeyStatesUnsupported.
func (t *Table) CreateOrTakeVouched(ctx context.Context, r dynamolease.Record) (*dynamolease.Record, error) {
	if t.arrowRSBucket != "" {
		return nil, fmt.Errorf("create or take lease %q %q: %w", r.Path, r.ETag, dynamolease.ErrKeyStatesUnsupported)
	}
	rowPath, err := t.writablePath(r.Path)
	if err != nil {
		return nil, err
	}
	callCtx, cancel := context.WithTimeout(ctx, t.callTimeout)
	defer cancel()
	item := encodeItem(r)
	item[attrPath] = str(rowPath)
	out, err := t.client.PutItem(callCtx, &dynamodb.PutItemInput{
		TableName:           aws.String(t.name),
		Item:                item,
		ConditionExpression: aws.String("attribute_not_exists(#pk) OR (#released = :released AND #ks = :ks)"),
		ExpressionAttributeNames: map[string]string{
			"#pk": attrPath, "#released": attrReleased, "#ks": attrKeyState,
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":released": &types.AttributeValueMemberBOOL{Value: true},
			":ks":       str(dynamolease.EncodeKeyState(dynamolease.OwnVersionState(r.ETag))),
		},
		ReturnValues:                        types.ReturnValueAllOld,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err == nil {
		if len(out.Attributes) == 0 {
			return nil, nil
		}
		old, err := decodeItem(out.Attributes)
		if err != nil {
			return nil, err
		}
		old.Path = r.Path
		return old, nil
	}
	var failed *types.ConditionalCheckFailedException
	if !errors.As(err, &failed) {
		return nil, fmt.Errorf("create or take lease %q %q in %s: %w", r.Path, r.ETag, t.name, err)
	}
	return t.conditionFailed(ctx, r, failed)
}

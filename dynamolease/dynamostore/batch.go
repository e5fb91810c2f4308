package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/internal/rowcodec"
)

var _ dynamolease.BatchTable = (*Table)(nil)

// dynamoBatch is TransactWriteItems' limit of items per transaction.
const dynamoBatch = 100

// maxTransactAttempts bounds how often one batch call sends a transaction
// again after a cancellation; what is left then goes row by row.
const maxTransactAttempts = 3

// transactor is the part of *dynamodb.Client a batch needs; an API
// without it (a test's fake) has its rows written one by one.
type transactor interface {
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

// MaxBatch implements dynamolease.BatchTable.
func (t *Table) MaxBatch() int { return dynamoBatch }

// CreateInOrder implements dynamolease.BatchTable with TransactWriteItems, each Put on
// Create's condition. A transaction is all or nothing: when one of its
// rows exists, DynamoDB cancels it and says which (with the row, as
// ReturnValuesOnConditionCheckFailure=ALL_OLD asks), and the rows before
// that one are sent again. A server without transactions (dynalite)
// answers UnknownOperationException, and the rows are created one by one.
func (t *Table) CreateInOrder(ctx context.Context, rs []dynamolease.Record) (int, *dynamolease.Record, error) {
	tx, ok := t.client.(transactor)
	if !ok {
		return dynamolease.CreateInOrderOneByOne(ctx, t, rs)
	}
	limit := len(rs) // rs[limit], when there, could not be created
	var existing *dynamolease.Record
	for attempt := 0; limit > 0; attempt++ {
		if attempt == maxTransactAttempts {
			return 0, nil, nil // rs[0] keeps conflicting: the caller takes it on its own
		}
		puts, err := t.createPuts(rs[:limit])
		if err != nil {
			return 0, nil, err
		}
		reasons, err := t.transact(ctx, tx, puts)
		if unsupported(err) {
			return dynamolease.CreateInOrderOneByOne(ctx, t, rs)
		}
		if err != nil {
			return 0, nil, fmt.Errorf("create %d leases in %s: %w", limit, t.name, err)
		}
		stop, found, ours := t.firstRefused(reasons, rs[:limit])
		if stop < 0 || ours {
			return limit, existing, nil // written (or, retried by the SDK, written before)
		}
		limit, existing = stop, found
	}
	return 0, existing, nil
}

// firstRefused reads a cancelled transaction's reasons: the first row that
// failed its condition or conflicted (-1 when the transaction went
// through), the row found there, and whether every refused row is the one
// this call wrote (an SDK retry of a transaction whose first attempt
// landed: every row then fails against our own).
func (t *Table) firstRefused(reasons []types.CancellationReason, rs []dynamolease.Record) (stop int, found *dynamolease.Record, ours bool) {
	if reasons == nil {
		return -1, nil, false
	}
	stop, ours = -1, true
	for i, reason := range reasons {
		if i >= len(rs) || aws.ToString(reason.Code) == "None" {
			ours = false
			continue
		}
		row := t.reasonRow(reason, rs[i].Path)
		if row != nil && dynamolease.WroteIt(row, rs[i]) {
			continue
		}
		ours = false
		if stop < 0 {
			stop, found = i, row
		}
	}
	if stop < 0 && !ours {
		stop = 0 // cancelled without a reason we can read: take the first row alone
	}
	return stop, found, ours
}

// reasonRow is the row a cancellation reason carries, if it is readable.
func (t *Table) reasonRow(reason types.CancellationReason, path string) *dynamolease.Record {
	if aws.ToString(reason.Code) != "ConditionalCheckFailed" || len(reason.Item) == 0 {
		return nil
	}
	row, err := decodeItem(reason.Item)
	if err != nil {
		return nil
	}
	row.Path = path
	return row
}

func (t *Table) createPuts(rs []dynamolease.Record) ([]types.TransactWriteItem, error) {
	items := make([]types.TransactWriteItem, len(rs))
	for i, r := range rs {
		put, err := t.conditionalPut(r, "attribute_not_exists(#pk)", nil)
		if err != nil {
			return nil, err
		}
		items[i] = types.TransactWriteItem{Put: put}
	}
	return items, nil
}

// conditionalPut is one transaction item: r written on condition.
func (t *Table) conditionalPut(r dynamolease.Record, condition string, values map[string]types.AttributeValue) (*types.Put, error) {
	rowPath, err := t.writablePath(r.Path)
	if err != nil {
		return nil, err
	}
	item := encodeItem(r)
	item[attrPath] = str(rowPath)
	names := map[string]string{"#pk": attrPath}
	if values != nil {
		names["#gen"] = attrGeneration
	}
	return &types.Put{
		TableName:                           aws.String(t.name),
		Item:                                item,
		ConditionExpression:                 aws.String(condition),
		ExpressionAttributeNames:            names,
		ExpressionAttributeValues:           values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}, nil
}

// transact sends one transaction: nil reasons and nil error when it went
// through, the cancellation reasons when DynamoDB cancelled it.
func (t *Table) transact(ctx context.Context, tx transactor, items []types.TransactWriteItem) ([]types.CancellationReason, error) {
	callCtx, cancel := context.WithTimeout(ctx, t.callTimeout)
	defer cancel()
	_, err := tx.TransactWriteItems(callCtx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	var cancelled *types.TransactionCanceledException
	if errors.As(err, &cancelled) {
		reasons := cancelled.CancellationReasons
		if reasons == nil {
			reasons = []types.CancellationReason{}
		}
		return reasons, nil
	}
	return nil, err
}

// unsupported tells whether the server has no TransactWriteItems.
func unsupported(err error) bool {
	var apiErr smithy.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode() == "UnknownOperationException"
}

// ReplaceEach implements dynamolease.BatchTable with TransactWriteItems, each Put on
// Replace's condition. A row that fails its condition takes no part in the
// next transaction; rows a transaction could not settle in a few attempts,
// and rows read with an unreadable generation, are written one by one.
func (t *Table) ReplaceEach(ctx context.Context, rs []dynamolease.Record, seen []uint64) ([]bool, []*dynamolease.Record, error) {
	written, current := make([]bool, len(rs)), make([]*dynamolease.Record, len(rs))
	tx, ok := t.client.(transactor)
	var pending []int
	for i := range rs {
		if ok && seen[i] != rowcodec.UnreadableGeneration {
			pending = append(pending, i)
		}
	}
	for attempt := 0; len(pending) > 0 && attempt < maxTransactAttempts; attempt++ {
		var err error
		pending, err = t.replaceRound(ctx, tx, rs, seen, pending, written, current)
		if unsupported(err) {
			break
		}
		if err != nil {
			return written, current, fmt.Errorf("replace %d leases in %s: %w", len(pending), t.name, err)
		}
	}
	err := dynamolease.ReplaceUndecided(ctx, t, rs, seen, written, current)
	return written, current, err
}

// replaceRound sends the pending rows in one transaction and returns the
// rows to send again: none when it went through; after a cancellation, the
// rows that did not fail their own condition.
func (t *Table) replaceRound(ctx context.Context, tx transactor, rs []dynamolease.Record, seen []uint64, pending []int, written []bool, current []*dynamolease.Record) ([]int, error) {
	items := make([]types.TransactWriteItem, len(pending))
	for j, i := range pending {
		put, err := t.conditionalPut(rs[i], "attribute_exists(#pk) AND #gen = :seen",
			map[string]types.AttributeValue{":seen": &types.AttributeValueMemberN{Value: strconv.FormatUint(seen[i], 10)}})
		if err != nil {
			return pending, err
		}
		items[j] = types.TransactWriteItem{Put: put}
	}
	reasons, err := t.transact(ctx, tx, items)
	if err != nil {
		return pending, err
	}
	if reasons == nil {
		for _, i := range pending {
			written[i] = true
		}
		return nil, nil
	}
	var again []int
	for j, i := range pending {
		if j >= len(reasons) || aws.ToString(reasons[j].Code) != "ConditionalCheckFailed" {
			again = append(again, i)
			continue
		}
		row := t.reasonRow(reasons[j], rs[i].Path)
		switch {
		case row != nil && dynamolease.WroteIt(row, rs[i]):
			written[i] = true
		case row != nil:
			current[i] = row
		default:
			// Failed without the row sent back: left to the row-by-row
			// pass, which reads it.
		}
	}
	return again, nil
}

package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/internal/rowcodec"
)

// API is the part of the DynamoDB client the lease table uses;
// *dynamodb.Client implements it, and tests can put a fake in its place.
type API interface {
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, opts ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, opts ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	DescribeTimeToLive(ctx context.Context, in *dynamodb.DescribeTimeToLiveInput, opts ...func(*dynamodb.Options)) (*dynamodb.DescribeTimeToLiveOutput, error)
	UpdateTimeToLive(ctx context.Context, in *dynamodb.UpdateTimeToLiveInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error)
}

// Attribute names of a lease row (dynamolease's package documentation).
const (
	attrPath       = "path"
	attrETag       = "etag"
	attrGeneration = "generation"
	attrTimeout    = "timeout"
	attrTTL        = "ttl"
	attrOwner      = "owner"
	attrReleased   = "released"
	// attrKeyState is a released row's recorded key state
	// (dynamolease/keystate.go); never on arrow-rs keyed rows.
	attrKeyState = "key_state"
)

// DefaultCallTimeout bounds each DynamoDB call, retries included, so an
// unreachable table turns into a dynamolease.StoreError quickly.
const DefaultCallTimeout = 3 * time.Second

// Table is a dynamolease.Table on a DynamoDB table (or moto, or dynalite), shared
// with arrow-rs object_store's DynamoDB commit protocol.
type Table struct {
	client      API
	name        string
	callTimeout time.Duration
	// arrowRSBucket, when set, is the one bucket whose leases the table
	// holds, keyed by object key alone (keyformat.go).
	arrowRSBucket string
}

// Option tunes a Table.
type Option func(*Table)

// WithCallTimeout sets the bound on each DynamoDB call (default
// DefaultCallTimeout).
func WithCallTimeout(d time.Duration) Option {
	return func(t *Table) { t.callTimeout = d }
}

// New returns the lease table named tableName.
func New(client API, tableName string, opts ...Option) *Table {
	t := &Table{client: client, name: tableName, callTimeout: DefaultCallTimeout}
	for _, o := range opts {
		o(t)
	}
	return t
}

// Create implements dynamolease.Table with PutItem conditional on
// attribute_not_exists. When the condition fails it returns the row DynamoDB
// sent back (ReturnValuesOnConditionCheckFailure=ALL_OLD), or reads it with a
// consistent GetItem when the server sent none (dynalite).
func (t *Table) Create(ctx context.Context, r dynamolease.Record) (*dynamolease.Record, error) {
	if t.arrowRSBucket != "" && r.KeyState != nil {
		// A row arrow-rs reads as held, whatever it records: no births.
		return nil, fmt.Errorf("create lease %q %q: %w", r.Path, r.ETag, dynamolease.ErrKeyStatesUnsupported)
	}
	return t.put(ctx, r, "attribute_not_exists(#pk)", nil, false)
}

// Replace implements dynamolease.Table with PutItem conditional on the
// generation, the condition arrow-rs uses for a takeover, and, for
// s3cond's own takeovers, on the rest of the row they saw (fenceCondition).
func (t *Table) Replace(ctx context.Context, r dynamolease.Record, seen uint64) (*dynamolease.Record, error) {
	if t.arrowRSBucket != "" {
		r.KeyState = nil // arrow-rs keyed rows never carry one
	}
	if seen == rowcodec.UnreadableGeneration {
		return t.replaceUnreadable(ctx, r)
	}
	condition, values := fenceCondition("attribute_exists(#pk) AND #gen = :seen", r.Fence)
	values[":seen"] = number(seen)
	return t.put(ctx, r, condition, values, true)
}

// put writes r on condition; usesGeneration says whether the condition
// names the generation attribute (#gen).
func (t *Table) put(ctx context.Context, r dynamolease.Record, condition string, values map[string]types.AttributeValue, usesGeneration bool) (*dynamolease.Record, error) {
	rowPath, err := t.writablePath(r.Path)
	if err != nil {
		return nil, err
	}
	callCtx, cancel := context.WithTimeout(ctx, t.callTimeout)
	defer cancel()
	names := map[string]string{"#pk": attrPath}
	if usesGeneration {
		names["#gen"] = attrGeneration
	}
	if r.Fence != nil {
		names["#owner"], names["#ttl"], names["#timeout"] = attrOwner, attrTTL, attrTimeout
	}
	item := encodeItem(r)
	item[attrPath] = str(rowPath)
	_, err = t.client.PutItem(callCtx, &dynamodb.PutItemInput{
		TableName:                           aws.String(t.name),
		Item:                                item,
		ConditionExpression:                 aws.String(condition),
		ExpressionAttributeNames:            names,
		ExpressionAttributeValues:           values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err == nil {
		return nil, nil
	}
	var failed *types.ConditionalCheckFailedException
	if !errors.As(err, &failed) {
		return nil, fmt.Errorf("put lease %q %q in %s: %w", r.Path, r.ETag, t.name, err)
	}
	return t.conditionFailed(ctx, r, failed)
}

// Get implements dynamolease.Table with a strongly consistent GetItem.
func (t *Table) Get(ctx context.Context, path, etag string) (*dynamolease.Record, error) {
	// A read of another bucket's lease (the readiness probe's) reads the
	// path unchanged: no write ever makes such a row, so it reads as absent
	// and still proves the table answers.
	rowPath, _ := t.rowPath(path)
	callCtx, cancel := context.WithTimeout(ctx, t.callTimeout)
	defer cancel()
	out, err := t.client.GetItem(callCtx, &dynamodb.GetItemInput{
		TableName:      aws.String(t.name),
		Key:            map[string]types.AttributeValue{attrPath: str(rowPath), attrETag: str(etag)},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("get lease %q %q from %s: %w", path, etag, t.name, err)
	}
	if len(out.Item) == 0 {
		return nil, nil
	}
	r, err := decodeItem(out.Item)
	if err != nil {
		return nil, err
	}
	r.Path = path
	return r, nil
}

func encodeItem(r dynamolease.Record) map[string]types.AttributeValue {
	r = dynamolease.Normalise(r)
	item := map[string]types.AttributeValue{
		attrPath:       str(r.Path),
		attrETag:       str(r.ETag),
		attrGeneration: number(r.Generation),
		attrTimeout:    number(uint64(r.Timeout.Milliseconds())),
		attrReleased:   &types.AttributeValueMemberBOOL{Value: r.Released},
	}
	if !r.TTL.IsZero() {
		item[attrTTL] = &types.AttributeValueMemberN{Value: strconv.FormatInt(r.TTL.Unix(), 10)}
	}
	if r.Owner != "" {
		item[attrOwner] = str(r.Owner)
	}
	if r.KeyState != nil {
		item[attrKeyState] = str(dynamolease.EncodeKeyState(*r.KeyState))
	}
	encodeReceipt(item, r.Receipt)
	return item
}

// decodeItem reads a row, including one arrow-rs wrote (no owner, no
// released flag) and one whose numbers are unreadable (rowdecode.go).
func decodeItem(item map[string]types.AttributeValue) (*dynamolease.Record, error) {
	var r dynamolease.Record
	var err error
	if r.Path, err = stringAttr(item, attrPath); err != nil {
		return nil, err
	}
	if r.ETag, err = stringAttr(item, attrETag); err != nil {
		return nil, err
	}
	var problems rowcodec.Problems
	r.Generation = rowcodec.UnreadableGeneration
	if v, ok := item[attrGeneration].(*types.AttributeValueMemberN); ok {
		r.Generation = rowcodec.ParseGeneration(v.Value, &problems)
	} else {
		problems.Add("generation missing or not a number")
	}
	if v, ok := item[attrTimeout].(*types.AttributeValueMemberN); ok {
		r.Timeout = rowcodec.ParseTimeout(v.Value, &problems)
	} else {
		problems.Add("timeout missing or not a number")
	}
	if v, ok := item[attrTTL]; ok {
		n, isNumber := v.(*types.AttributeValueMemberN)
		epoch, err := int64(0), error(nil)
		if isNumber {
			epoch, err = strconv.ParseInt(n.Value, 10, 64)
		}
		if !isNumber || err != nil {
			problems.Add("ttl is not an epoch second")
		} else {
			r.TTL = rowcodec.TTL(epoch, &problems)
		}
	}
	if v, ok := item[attrOwner].(*types.AttributeValueMemberS); ok {
		r.Owner = v.Value
	}
	if v, ok := item[attrReleased].(*types.AttributeValueMemberBOOL); ok {
		r.Released = v.Value
	}
	if v, ok := item[attrKeyState].(*types.AttributeValueMemberS); ok {
		r.KeyState = dynamolease.DecodeKeyState(v.Value)
	}
	r.Receipt = decodeReceipt(item)
	r.Unreadable = problems.String()
	return &r, nil
}

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func number(n uint64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatUint(n, 10)}
}

func stringAttr(item map[string]types.AttributeValue, name string) (string, error) {
	v, ok := item[name].(*types.AttributeValueMemberS)
	if !ok {
		return "", fmt.Errorf("lease row: attribute %q missing or not a string", name)
	}
	return v.Value, nil
}

// Name is the DynamoDB table's name.
func (t *Table) Name() string { return t.name }

// replaceUnreadable takes over a row read with rowcodec.UnreadableGeneration: its
// stored generation is missing or unusable, so the write is conditional on
// the generation attribute being exactly what a fresh read shows.
func (t *Table) replaceUnreadable(ctx context.Context, r dynamolease.Record) (*dynamolease.Record, error) {
	rowPath, err := t.writablePath(r.Path)
	if err != nil {
		return nil, err
	}
	callCtx, cancel := context.WithTimeout(ctx, t.callTimeout)
	defer cancel()
	out, err := t.client.GetItem(callCtx, &dynamodb.GetItemInput{
		TableName:      aws.String(t.name),
		Key:            map[string]types.AttributeValue{attrPath: str(rowPath), attrETag: str(r.ETag)},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("get lease %q %q from %s: %w", r.Path, r.ETag, t.name, err)
	}
	if len(out.Item) == 0 {
		return nil, dynamolease.ErrConditionFailed
	}
	current, err := decodeItem(out.Item)
	if err != nil {
		return nil, err
	}
	current.Path = r.Path
	if current.Generation != rowcodec.UnreadableGeneration {
		return current, dynamolease.ErrConditionFailed
	}
	stored, ok := out.Item[attrGeneration]
	if !ok {
		return t.put(ctx, r, "attribute_exists(#pk) AND attribute_not_exists(#gen)", nil, true)
	}
	return t.put(ctx, r, "attribute_exists(#pk) AND #gen = :seen", map[string]types.AttributeValue{":seen": stored}, true)
}

// conditionFailed is the row a refused conditional write of r met, with
// ErrConditionFailed: the item DynamoDB returned with the refusal, or a
// read of it where the store returned none with it.
func (t *Table) conditionFailed(ctx context.Context, r dynamolease.Record, failed *types.ConditionalCheckFailedException) (*dynamolease.Record, error) {
	if len(failed.Item) > 0 {
		current, err := decodeItem(failed.Item)
		if err != nil {
			return nil, err
		}
		current.Path = r.Path
		return current, dynamolease.ErrConditionFailed
	}
	current, err := t.Get(ctx, r.Path, r.ETag)
	if err != nil {
		return nil, err
	}
	return current, dynamolease.ErrConditionFailed
}

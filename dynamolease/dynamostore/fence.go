package dynamostore

import (
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/s3cond/s3cond/dynamolease"
)

// fenceCondition adds a takeover's fence (dynamolease/fence.go) to the
// generation condition: the owner, TTL and timeout the taker saw, an
// attribute it saw absent required absent (arrow-rs writes no owner). A nil
// fence adds nothing. The names #owner, #ttl and #timeout are bound by put.
func fenceCondition(generation string, f *dynamolease.Fence) (string, map[string]types.AttributeValue) {
	values := map[string]types.AttributeValue{}
	if f == nil {
		return generation, values
	}
	condition := generation + " AND #timeout = :fenceTimeout"
	values[":fenceTimeout"] = number(uint64(f.Timeout.Milliseconds()))
	if f.Owner == "" {
		condition += " AND attribute_not_exists(#owner)"
	} else {
		condition += " AND #owner = :fenceOwner"
		values[":fenceOwner"] = str(f.Owner)
	}
	if f.TTL.IsZero() {
		condition += " AND attribute_not_exists(#ttl)"
	} else {
		condition += " AND #ttl = :fenceTTL"
		values[":fenceTTL"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(f.TTL.Unix(), 10)}
	}
	return condition, values
}

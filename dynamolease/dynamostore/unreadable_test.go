package dynamostore_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/s3cond/s3cond/dynamolease/tabletest"
	"github.com/s3cond/s3cond/internal/testservers"
)

// unreadableRows are hand-written lease rows whose numbers s3cond cannot use.
var unreadableRows = []struct {
	name                string
	generation, timeout types.AttributeValue // nil: absent
}{
	{name: "text generation", generation: &types.AttributeValueMemberS{Value: "abc"}, timeout: &types.AttributeValueMemberN{Value: "1000"}},
	{name: "missing timeout", generation: &types.AttributeValueMemberN{Value: "0"}},
	{name: "absurd timeout", generation: &types.AttributeValueMemberN{Value: "0"}, timeout: &types.AttributeValueMemberN{Value: "9000000000000000"}},
	{name: "generation at the top of uint64", generation: &types.AttributeValueMemberN{Value: "18446744073709551615"}, timeout: &types.AttributeValueMemberN{Value: "1000"}},
}

// An unreadable row is held for the reader's own timeout × skew, then taken
// over and rewritten readable (tabletest.HeldThenTakenOver), on moto.
func TestUnreadableRowsAreHeldForABoundedTime(t *testing.T) {
	dynamo := dynamoClient(t, testservers.StartMoto(t))
	for _, row := range unreadableRows {
		t.Run(row.name, func(t *testing.T) {
			tbl := newDynamoTable(t, dynamo)
			item := map[string]types.AttributeValue{"path": &types.AttributeValueMemberS{Value: "b/k"}, "etag": &types.AttributeValueMemberS{Value: "*"}}
			if row.generation != nil {
				item["generation"] = row.generation
			}
			if row.timeout != nil {
				item["timeout"] = row.timeout
			}
			if _, err := dynamo.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(tbl.Name()), Item: item}); err != nil {
				t.Fatal(err)
			}
			tabletest.HeldThenTakenOver(t, tbl)
		})
	}
}

package dynamostore

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/s3cond/s3cond/dynamolease"
)

// attrReceipt is a released row's receipt (dynamolease/receipt.go): s3cond's
// addition, which arrow-rs neither writes nor reads.
const attrReceipt = "receipt"

func encodeReceipt(item map[string]types.AttributeValue, receipt string) {
	if receipt != "" {
		item[attrReceipt] = str(receipt)
	}
}

// decodeReceipt reads a row's receipt: empty for none, or for one that is
// not a string or longer than a receipt may be.
func decodeReceipt(item map[string]types.AttributeValue) string {
	v, ok := item[attrReceipt].(*types.AttributeValueMemberS)
	if !ok || len(v.Value) > dynamolease.MaxReceiptLength {
		return ""
	}
	return v.Value
}

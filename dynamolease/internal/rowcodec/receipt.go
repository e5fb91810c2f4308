package rowcodec

import (
	"encoding/json"

	"github.com/s3cond/s3cond/dynamolease"
)

// Receipt reads a row's receipt (dynamolease/receipt.go): empty for none,
// for one that is not a string, or for one longer than a receipt may be
// (a row edited by hand must not make every reader hold megabytes).
func Receipt(raw json.RawMessage) string {
	var text string
	if len(raw) == 0 || json.Unmarshal(raw, &text) != nil || len(text) > dynamolease.MaxReceiptLength {
		return ""
	}
	return text
}

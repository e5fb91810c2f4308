package proxy

import (
	"net/http"
	"net/textproto"
	"strings"
)

// noOpValues are the values of refused headers that ask for nothing a
// store ignoring the header would not do anyway: no legal hold, a bucket
// without object lock. S3 accepts them, and SDKs and tools send them
// explicitly (a bucket created with ObjectLockEnabledForBucket=False, an
// object put with ObjectLockLegalHoldStatus=OFF), so refusing them would
// refuse what S3 serves; they are forwarded as they came.
var noOpValues = map[string]string{
	textproto.CanonicalMIMEHeaderKey("x-amz-object-lock-legal-hold"):     "OFF",
	textproto.CanonicalMIMEHeaderKey("x-amz-bucket-object-lock-enabled"): "false",
}

// asksForNothing reports whether every value of the header key is its
// no-op value (compared as S3 compares them, case-insensitively).
func asksForNothing(key string, values []string) bool {
	noOp, ok := noOpValues[key]
	if !ok || len(values) == 0 {
		return false
	}
	for _, v := range values {
		if !strings.EqualFold(strings.TrimSpace(v), noOp) {
			return false
		}
	}
	return true
}

// headerAsksForNothing is asksForNothing for a header of h.
func headerAsksForNothing(h http.Header, key string) bool {
	return asksForNothing(key, h[key])
}

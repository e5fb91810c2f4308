package proxy

import (
	"net/http"
	"testing"

	"github.com/s3cond/s3cond/proxy/leasedwrite"
)

// A refused header whose value asks for nothing (no legal hold, a bucket
// without object lock) is what a store ignoring it does anyway: S3 serves
// it, and so does s3cond, on a store without object lock, as a header and
// hoisted into the query. Any other value is still refused.
func TestObjectLockValuesThatAskForNothingAreForwarded(t *testing.T) {
	cases := []struct {
		op, header, value string
		forwarded         bool
	}{
		{"PutObject", "X-Amz-Object-Lock-Legal-Hold", "OFF", true},
		{"CreateMultipartUpload", "X-Amz-Object-Lock-Legal-Hold", "OFF", true},
		{"CreateBucket", "X-Amz-Bucket-Object-Lock-Enabled", "false", true},
		{"CreateBucket", "X-Amz-Bucket-Object-Lock-Enabled", "False", true},
		{"PutObject", "X-Amz-Object-Lock-Legal-Hold", "ON", false},
		{"CreateBucket", "X-Amz-Bucket-Object-Lock-Enabled", "true", false},
		{"PutObject", "X-Amz-Object-Lock-Mode", "GOVERNANCE", false},
	}
	for _, tc := range cases {
		for _, hoisted := range []bool{false, true} {
			v := newValueProbe(t, KeyPolicyStrict)
			v.proxy.backend.Mode = func() leasedwrite.Mode { return leasedwrite.Mode{Kind: leasedwrite.Native} }
			method, target, header, body := writeTableRequest(t, tc.op)
			if hoisted {
				target = withQuery(target, tc.header, tc.value)
			} else {
				header.Set(tc.header, tc.value)
			}
			status, answer := v.do(t, testKeyID, method, target, header, body)
			reached := v.store.take()
			what := tc.op + " " + tc.header + ": " + tc.value
			if hoisted {
				what += " (in the query)"
			}
			switch {
			case tc.forwarded && (status == http.StatusNotImplemented || len(reached) != 1):
				t.Errorf("%s: %d %s, %d store requests; want it forwarded", what, status, answer, len(reached))
			case !tc.forwarded && (status != http.StatusNotImplemented || len(reached) != 0):
				t.Errorf("%s: %d %s, %d store requests; want 501 and nothing sent", what, status, answer, len(reached))
			}
		}
	}
}

package testkit

import (
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// DeleteOutcome splits a DeleteObjects answer into the error code of each
// key that failed and the keys deleted, sorted.
func DeleteOutcome(out *s3.DeleteObjectsOutput) (failed map[string]string, deleted []string) {
	failed = map[string]string{}
	for _, e := range out.Errors {
		failed[aws.ToString(e.Key)] = aws.ToString(e.Code)
	}
	for _, d := range out.Deleted {
		deleted = append(deleted, aws.ToString(d.Key))
	}
	sort.Strings(deleted)
	return failed, deleted
}

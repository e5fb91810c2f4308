package linearizability

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// deleteEntry sends in (a delete on Expect's ETag) as a DeleteObjects of
// one entry: the same operation as DeleteObject If-Match, answered in the
// entry (Deleted, PreconditionFailed, NoSuchKey).
func (c *workloadClient) deleteEntry(in Input, etag string) {
	pending := c.rec.Invoke(c.id, in)
	ctx, cancel := c.opContext()
	defer cancel()
	out, err := c.s3.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(c.w.Cluster.Bucket),
		Delete: &types.Delete{Objects: []types.ObjectIdentifier{{Key: aws.String(in.Key), ETag: aws.String(etag)}}}})
	if err != nil {
		c.finish(pending, in, err)
		return
	}
	switch {
	case len(out.Deleted) == 1:
		c.returned(pending, Output{Outcome: OutcomeOK})
	case len(out.Errors) == 1 && aws.ToString(out.Errors[0].Code) == "PreconditionFailed":
		c.returned(pending, Output{Outcome: OutcomePreconditionFailed})
	case len(out.Errors) == 1 && aws.ToString(out.Errors[0].Code) == "NoSuchKey":
		c.returned(pending, Output{Outcome: OutcomeNotFound})
	case len(out.Errors) == 1 && aws.ToString(out.Errors[0].Code) == "ConditionalRequestConflict":
		c.returned(pending, Output{Outcome: OutcomeConflict})
	default:
		// Anything else may or may not have deleted: ambiguous.
		c.counters.unexpected("delete-entry "+in.Key, fmt.Errorf("answer %+v", out))
		c.returned(pending, Output{Outcome: OutcomeAmbiguous})
	}
}

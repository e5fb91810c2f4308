package proxy

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3cond/s3cond/internal/testkit"
)

// DeleteObjects' per-key <Size> and <LastModifiedTime> are S3's per-entry
// x-amz-if-match-size and x-amz-if-match-last-modified-time: s3cond
// evaluates them under each entry's lease, answers an entry that does not
// hold with PreconditionFailed in its <Error>, never sends it, and sends
// the others without the conditions it enforced. A missing object passes,
// as DeleteObject answers it 204.
func TestDeleteObjectsSizeAndTimeConditions(t *testing.T) {
	rec := &deleteRecorder{}
	f := newGuardFixture(t, guardOptions{wrap: rec.wrap})
	ctx := context.Background()
	modified := map[string]time.Time{}
	for _, key := range []string{"size-wrong", "size-right", "time-wrong", "time-right", "both-right"} {
		if _, err := f.put(t, key, "12345", nil); err != nil {
			t.Fatal(err)
		}
		head, err := f.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucketName), Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		modified[key] = aws.ToTime(head.LastModified)
	}
	at := func(key string, shift time.Duration) *time.Time { m := modified[key].Add(shift); return &m }
	out := f.deleteObjects(t,
		s3types.ObjectIdentifier{Key: aws.String("size-wrong"), Size: aws.Int64(4)},
		s3types.ObjectIdentifier{Key: aws.String("size-right"), Size: aws.Int64(5)},
		s3types.ObjectIdentifier{Key: aws.String("time-wrong"), LastModifiedTime: at("time-wrong", -time.Hour)},
		s3types.ObjectIdentifier{Key: aws.String("time-right"), LastModifiedTime: at("time-right", 0)},
		s3types.ObjectIdentifier{Key: aws.String("both-right"), Size: aws.Int64(5), LastModifiedTime: at("both-right", 0)},
		s3types.ObjectIdentifier{Key: aws.String("missing"), Size: aws.Int64(3)},
	)
	failed, deleted := testkit.DeleteOutcome(out)
	if failed["size-wrong"] != "PreconditionFailed" || failed["time-wrong"] != "PreconditionFailed" || len(failed) != 2 {
		t.Errorf("errors %v, want PreconditionFailed for size-wrong and time-wrong only", failed)
	}
	want := []string{"both-right", "missing", "size-right", "time-right"}
	if !slices.Equal(deleted, want) {
		t.Errorf("deleted %v, want %v", deleted, want)
	}
	if sent := rec.keysSent(); !slices.Equal(sent, want) {
		t.Errorf("the store was asked to delete %v, want %v", sent, want)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, r := range rec.requests {
		for _, o := range r.Objects {
			if o.Size != "" || o.LastModifiedTime != "" {
				t.Errorf("entry %q reached the store with its conditions (%q, %q): s3cond enforces them", o.Key, o.Size, o.LastModifiedTime)
			}
		}
	}
	for _, key := range []string{"size-wrong", "time-wrong"} {
		if _, err := f.get(t, key); err != nil {
			t.Errorf("%s was deleted: %v", key, err)
		}
	}
}

package bench

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// DeletePrefix deletes every object under prefix, in batches of 1000 with
// DeleteObjects, falling back to one DeleteObject per key for endpoints that
// do not implement the batch call.
func DeletePrefix(ctx context.Context, t *Target, prefix string) error {
	pages := s3.NewListObjectsV2Paginator(t.Client, &s3.ListObjectsV2Input{
		Bucket: aws.String(t.Bucket), Prefix: aws.String(prefix),
	})
	var failures []error
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("list %s: %w", prefix, err)
		}
		if len(page.Contents) == 0 {
			continue
		}
		if err := deleteBatch(ctx, t, page.Contents); err != nil {
			failures = append(failures, err)
		}
	}
	return errors.Join(failures...)
}

func deleteBatch(ctx context.Context, t *Target, objects []types.Object) error {
	ids := make([]types.ObjectIdentifier, 0, len(objects))
	for _, o := range objects {
		ids = append(ids, types.ObjectIdentifier{Key: o.Key})
	}
	out, err := t.Client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
		Bucket: aws.String(t.Bucket),
		Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)},
	})
	if err == nil && len(out.Errors) == 0 {
		return nil
	}
	var failures []error
	for _, o := range objects {
		_, err := t.Client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(t.Bucket), Key: o.Key})
		if err != nil {
			failures = append(failures, fmt.Errorf("delete %s: %w", aws.ToString(o.Key), err))
		}
	}
	return errors.Join(failures...)
}

package probe

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

func listKeys(t *testing.T, s *store) []string {
	t.Helper()
	out, err := s.c().ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: &s.bucket})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	return keys
}

package probe

import (
	"context"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/internal/testservers"
)

// startFake starts a faulty store (internal/testservers/faultystores.go)
// and returns probe options for it, with small races to keep tests quick.
func startFake(t *testing.T, fault func(inner http.Handler) http.Handler) Options {
	t.Helper()
	return Options{Endpoint: testservers.StartFaultyStore(t, fault), AccessKeyID: "k", SecretKey: "s", PathStyle: true,
		Bucket: testservers.FaultyStoreBucket, Writers: 4, Rounds: 3}
}

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

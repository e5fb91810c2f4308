package embedded

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/rs/zerolog"
)

// devBucket is the bucket the tests write to; the store creates it on first use.
var devBucket = aws.String("dev-bucket")

// startStoreWithClient starts a store in a temporary directory, stopped when
// the test ends, and returns an SDK client for it.
func startStoreWithClient(t *testing.T) (context.Context, *Server, *s3.Client) {
	t.Helper()
	ctx := testContext(t)
	s := startStore(t, ctx, t.TempDir(), zerolog.Nop())
	t.Cleanup(func() {
		stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Close(stop)
	})
	return ctx, s, client(s)
}

func putObject(t *testing.T, ctx context.Context, c *s3.Client, key string, body []byte) {
	t.Helper()
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: devBucket, Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
}

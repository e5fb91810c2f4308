package linearizability

import (
	"context"
	"fmt"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3cond/s3cond/e2e"
)

// abandonedWrite sends input's PUT by hand (the SDK wants a seekable body
// over plain HTTP) with a body that, half-way, cancels the request: the
// client hangs up mid-upload, s3cond holds half a body for the store, and
// the write's outcome is ambiguous.
func (c *workloadClient) abandonedWrite(ctx context.Context, cancel context.CancelFunc, key string, input *s3.PutObjectInput, body []byte) error {
	header := http.Header{}
	if v := aws.ToString(input.IfNoneMatch); v != "" {
		header.Set("If-None-Match", v)
	}
	if v := aws.ToString(input.IfMatch); v != "" {
		header.Set("If-Match", v)
	}
	endpoints := c.w.Cluster.Endpoints()
	resp, err := e2e.DoContext(ctx, endpoints[c.id%len(endpoints)], c.w.Cluster.Cred, e2e.RawRequest{
		Method: http.MethodPut, Path: "/" + c.w.Cluster.Bucket + "/" + key, Header: header,
		BodyFrom:      &abandoningReader{body: body, half: len(body) / 2, cancel: cancel},
		ContentLength: int64(len(body)), PayloadHash: e2e.UnsignedPayload})
	switch {
	case err != nil:
		return err
	case resp.Status == http.StatusOK:
		return nil // finished before the hang-up could cut it
	default:
		// Whatever s3cond answered before the body was in, the checker
		// treats it as ambiguous: weaker, never wrong.
		return fmt.Errorf("abandoned write answered %d", resp.Status)
	}
}

// abandoningReader reads half of body, then cancels its request and fails.
type abandoningReader struct {
	body   []byte
	read   int
	half   int
	cancel context.CancelFunc
}

func (r *abandoningReader) Read(p []byte) (int, error) {
	if r.read >= r.half {
		r.cancel()
		return 0, context.Canceled
	}
	n := copy(p, r.body[r.read:r.half])
	r.read += n
	return n, nil
}

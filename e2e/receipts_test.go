package e2e

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// cutFirstAnswer stands for a network that resets the connection once
// s3cond answered: the first answer to a conditional PUT reaches the
// client as a reset, and the SDK retries it.
type cutFirstAnswer struct {
	next http.RoundTripper
	cut  atomic.Int32
	// status is the status of the answer that was cut.
	status atomic.Int32
}

func (c *cutFirstAnswer) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(r)
	conditional := r.Header.Get("If-None-Match") != "" || r.Header.Get("If-Match") != ""
	if err != nil || r.Method != http.MethodPut || !conditional || !c.cut.CompareAndSwap(0, 1) {
		return resp, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	c.status.Store(int32(resp.StatusCode))
	return nil, &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
}

// retryingClient is a client of e with the SDK's standard retries, over
// transport.
func retryingClient(e *Env, cred Credentials, transport http.RoundTripper) *s3.Client {
	return NewS3Client(e.Endpoint, cred, &http.Client{Transport: transport}, func(o *s3.Options) {
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = 3
			so.RateLimiter = ratelimit.None
		})
		o.RetryMaxAttempts = 3
	})
}

// TestLostAnswerRetryGetsItsReceipt (issue 36 item 4): a conditional
// PutObject whose 200 is lost on its way to the client is retried by the
// SDK, with the same invocation id and body, and gets 200 and the ETag
// its first attempt wrote, not 412; on versitygw and on s3rver, and in
// strict mode on versitygw (the lease taken first, its row's record read,
// the 412 decided under the lease).
func TestLostAnswerRetryGetsItsReceipt(t *testing.T) {
	for _, tc := range []struct {
		name    string
		backend BackendKind
		env     []string
	}{
		{"versitygw", BackendVersityGW, nil},
		{"s3rver", BackendS3rver, nil},
		{"versitygw-strict", BackendVersityGW, []string{"S3COND_LEASE_SERIALIZE=all-writes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := NewEnv(t, WithBackend(tc.backend), WithProcessEnv(tc.env...))
			e.RequireProxy(t)
			ctx := t.Context()
			CreateBucket(t, e.Client(t, e.RW), "receipts")
			for _, cond := range []string{"If-None-Match", "If-Match"} {
				t.Run(cond, func(t *testing.T) {
					key := "lost-" + cond
					in := &s3.PutObjectInput{Bucket: aws.String("receipts"), Key: aws.String(key), Body: bytes.NewReader([]byte("mine"))}
					if cond == "If-None-Match" {
						in.IfNoneMatch = aws.String("*")
					} else {
						in.IfMatch = putBytes(t, ctx, e.Client(t, e.RW), "receipts", key, []byte("before")).ETag
					}
					cut := &cutFirstAnswer{next: http.DefaultTransport.(*http.Transport).Clone()}
					out, err := retryingClient(e, e.RW, cut).PutObject(ctx, in)
					if cut.status.Load() != http.StatusOK {
						t.Fatalf("the answer cut was %d, want the first attempt's 200", cut.status.Load())
					}
					if err != nil {
						t.Fatalf("retry of a committed write: %v, want its first attempt's 200", err)
					}
					if got, want := aws.ToString(out.ETag), `"`+md5Hex([]byte("mine"))+`"`; got != want {
						t.Fatalf("retry answered ETag %s, want %s", got, want)
					}
				})
			}
		})
	}
}

func md5Hex(b []byte) string {
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}

// asAttempt sends a call as attempt of the SDK invocation id: the headers
// every attempt of one SDK call carries (and signs), set in place of the
// SDK's own just before it signs.
func asAttempt(id string, attempt int) func(*s3.Options) {
	return func(o *s3.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Finalize.Insert(middleware.FinalizeMiddlewareFunc("asAttempt",
				func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
					if req, ok := in.Request.(*smithyhttp.Request); ok {
						req.Header.Set("Amz-Sdk-Invocation-Id", id)
						req.Header.Set("Amz-Sdk-Request", fmt.Sprintf("attempt=%d; max=3", attempt))
					}
					return next.HandleFinalize(ctx, in)
				}), "Signing", middleware.Before)
		})
	}
}

// TestReceiptIsOnlyTheRetrysOwn (issue 36 item 4): a receipt answers only
// a retry of its own write: the same invocation id, principal and bytes.
// Another invocation, other bytes, another principal or a first attempt
// is evaluated as usual (412), and the invocation id is signed (a client
// cannot borrow one on the wire). A key that moved on since does not
// matter: the retry's own write committed.
func TestReceiptIsOnlyTheRetrysOwn(t *testing.T) {
	e := NewEnv(t)
	e.RequireProxy(t)
	ctx := t.Context()
	rw, granted := e.Client(t, e.RW), e.Client(t, e.Granted)
	CreateBucket(t, rw, "granted-receipts")
	create := func(c *s3.Client, body string, opts ...func(*s3.Options)) error {
		_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("granted-receipts"), Key: aws.String("k"),
			Body: bytes.NewReader([]byte(body)), IfNoneMatch: aws.String("*")}, opts...)
		return err
	}
	if err := create(rw, "mine", asAttempt("invocation-a", 1)); err != nil {
		t.Fatalf("first attempt: %v", err)
	}
	if err := create(rw, "mine", asAttempt("invocation-a", 2)); err != nil {
		t.Fatalf("the retry of a committed write: %v, want its 200", err)
	}
	for name, err := range map[string]error{
		"another invocation":     create(rw, "mine", asAttempt("invocation-b", 2)),
		"other bytes":            create(rw, "theirs", asAttempt("invocation-a", 2)),
		"another principal":      create(granted, "mine", asAttempt("invocation-a", 2)),
		"a first attempt, again": create(rw, "mine", asAttempt("invocation-a", 1)),
	} {
		if HTTPStatus(err) != http.StatusPreconditionFailed {
			t.Errorf("%s: %v, want 412", name, err)
		}
	}
	// Once another client read the object and wrote over it, the retry of
	// the write that committed still gets its 200: its receipt proves that
	// this invocation committed between its first attempt and this answer,
	// so 200 is linearizable, and 412 would tell a writer that won its race
	// that it lost it (a Delta or Lance commit would then retry at the next
	// version while its own stands).
	putBytes(t, ctx, rw, "granted-receipts", "k", []byte("moved on"))
	if err := create(rw, "mine", asAttempt("invocation-a", 3)); err != nil {
		t.Errorf("a retry once the key moved on: %v, want its first attempt's 200", err)
	}
}

package linearizability

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/s3cond/s3cond/e2e"
)

// Client is an aws-sdk-go-v2 S3 client for proxy i (modulo the number of
// proxies) that never retries and gives up after timeout: a test must see
// every failure as the server (or its absence) caused it.
func (c *Cluster) Client(i int, timeout time.Duration) *s3.Client {
	endpoints := c.Endpoints()
	return newClient(endpoints[i%len(endpoints)], c.Cred, timeout)
}

func newClient(endpoint string, cred e2e.Credentials, timeout time.Duration) *s3.Client {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	return e2e.NewS3Client(endpoint, cred, &http.Client{Transport: transport, Timeout: timeout})
}

func bucketInput(name string) *s3.CreateBucketInput {
	return &s3.CreateBucketInput{Bucket: aws.String(name)}
}

// classify maps an SDK error to the outcome a client can rely on. Any
// status the workload does not expect is ambiguous too, and reported by
// unexpected so the test can fail on it.
func classify(err error) (outcome Outcome, unexpected bool) {
	if err == nil {
		return OutcomeOK, false
	}
	switch status := e2e.HTTPStatus(err); {
	case status == http.StatusPreconditionFailed:
		return OutcomePreconditionFailed, false
	case status == http.StatusNotFound && (e2e.ErrorCode(err) == "NoSuchKey" || e2e.ErrorCode(err) == "NotFound"):
		return OutcomeNotFound, false
	case status == http.StatusConflict:
		return OutcomeConflict, false
	case status == http.StatusServiceUnavailable && refusedForLeaseStore(err):
		return OutcomeRefused, false
	case status == 0, status >= 500:
		return OutcomeAmbiguous, false
	default:
		return OutcomeAmbiguous, true
	}
}

// refusedForLeaseStore tells s3cond's 503 for an unreachable lease store,
// answered before anything reached the backend, from other 503s.
func refusedForLeaseStore(err error) bool {
	var apiErr smithy.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode() == "ServiceUnavailable" &&
		strings.Contains(apiErr.ErrorMessage(), "The lease store is unavailable")
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

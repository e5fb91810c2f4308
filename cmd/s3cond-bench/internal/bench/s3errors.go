package bench

import (
	"errors"
	"net/http"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
)

// StatusCode is the HTTP status of a failed S3 call, or 0 when the request
// got no response (connection refused, cancelled, ...).
func StatusCode(err error) int {
	var resp *awshttp.ResponseError
	if errors.As(err, &resp) {
		return resp.HTTPStatusCode()
	}
	return 0
}

// ErrorCode is the S3 error code of a failed call ("NoSuchKey"), or "".
func ErrorCode(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	return ""
}

// isPreconditionFailed reports a 412: the object changed under a CAS.
func isPreconditionFailed(err error) bool {
	return StatusCode(err) == http.StatusPreconditionFailed || ErrorCode(err) == "PreconditionFailed"
}

// isConflict reports a 409 ConditionalRequestConflict: another conditional
// write on the key was still running when the wait budget ended.
func isConflict(err error) bool {
	return StatusCode(err) == http.StatusConflict || ErrorCode(err) == "ConditionalRequestConflict"
}

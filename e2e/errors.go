package e2e

import (
	"errors"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
)

// RequireS3Error fails the test unless err is an S3 error response with the
// given HTTP status and error code. An empty code checks only the status
// (HEAD responses have no body, so no code).
func RequireS3Error(t testing.TB, err error, status int, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want %d %s, got success", status, code)
	}
	gotStatus := 0
	var respErr *awshttp.ResponseError
	if errors.As(err, &respErr) {
		gotStatus = respErr.HTTPStatusCode()
	}
	gotCode := ""
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		gotCode = apiErr.ErrorCode()
	}
	if gotStatus != status || (code != "" && gotCode != code) {
		t.Fatalf("want %d %s, got %d %s (%v)", status, code, gotStatus, gotCode, err)
	}
}

// HTTPStatus is the status of an SDK error response, or 0 if err is not one.
func HTTPStatus(err error) int {
	var respErr *awshttp.ResponseError
	if errors.As(err, &respErr) {
		return respErr.HTTPStatusCode()
	}
	return 0
}

// ErrorCode is the S3 error code of an SDK error, or "" if it has none.
func ErrorCode(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}

package proxy

import (
	"net/http"
	"time"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/s3err"
)

// RequestObserver is told about every finished request, for metrics.
// *metrics.Metrics (internal/metrics) is the implementation. It is called on
// the request's goroutine, so it must be quick.
type RequestObserver interface {
	ObserveRequest(RequestRecord)
}

// RequestRecord is what the proxy reports about one finished request.
type RequestRecord struct {
	Operation string // Operation.String()
	Status    int
	Duration  time.Duration
	BytesIn   int64 // verified request body bytes sent on to the backend
	BytesOut  int64 // response body bytes sent to the client
	// ConditionalOutcome is set for conditional and strict-mode writes:
	// committed, precondition_failed, no_such_key, conflict,
	// not_implemented, unavailable, client_closed or error.
	ConditionalOutcome string
	// SignatureFailure is the S3 error code of a request refused while
	// authenticating (SignatureDoesNotMatch, InvalidAccessKeyId, ...).
	SignatureFailure string
}

// markLeased records that the call runs as a conditional write even though
// it carried no If-Match / If-None-Match header: a strict-mode write
// (lease.serialize: all-writes). Conditional headers are seen without it.
func markLeased(c *call) {
	c.info.set(func(i *requestInfo) { i.leased = true })
}

type nopObserver struct{}

func (nopObserver) ObserveRequest(RequestRecord) {}

// isConditionalOperation reports whether op is a write that may carry
// write conditions.
func isConditionalOperation(op operation.Operation) bool {
	switch op {
	case operation.PutObject, operation.CopyObject, operation.CompleteMultipartUpload, operation.DeleteObject:
		return true
	}
	return false
}

// conditionalOutcome names how a conditional write ended, from its final
// status; "" when the request was no conditional write.
func conditionalOutcome(op operation.Operation, h http.Header, leased bool, status int) string {
	if !isConditionalOperation(op) {
		return ""
	}
	if !leased && h.Get("If-Match") == "" && h.Get("If-None-Match") == "" {
		return ""
	}
	switch {
	case status >= 200 && status < 300:
		return "committed"
	case status == http.StatusPreconditionFailed:
		return "precondition_failed"
	case status == http.StatusNotFound:
		return "no_such_key"
	case status == http.StatusConflict:
		return "conflict"
	case status == http.StatusNotImplemented:
		return "not_implemented"
	case status == http.StatusServiceUnavailable:
		return "unavailable"
	case status == StatusClientClosedRequest:
		return "client_closed"
	}
	return "error"
}

// signatureFailure names the reason a request failed to authenticate, ""
// when it did not. AccessDenied counts only before a key was identified
// (an expired presigned URL, an anonymous request): afterwards it is a
// bucket grant refusing, not a signature. Chunk, trailer and payload hash
// failures happen after identification and count too.
func signatureFailure(e *s3err.Error, authenticated bool) string {
	if e == nil {
		return ""
	}
	switch e.Code {
	case s3err.SignatureDoesNotMatch, s3err.InvalidAccessKeyID, s3err.RequestTimeTooSkewed,
		s3err.AuthorizationHeaderMalformed, s3err.AuthorizationQueryParametersError,
		s3err.XAmzContentSHA256Mismatch, s3err.MissingSecurityHeader:
		return string(e.Code)
	case s3err.AccessDenied:
		if !authenticated {
			return string(e.Code)
		}
	}
	return ""
}

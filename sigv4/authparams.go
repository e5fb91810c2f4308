package sigv4

import "net/http"

// Names of the SigV4 presigned-URL query parameters.
const (
	queryAlgorithm     = "X-Amz-Algorithm"
	queryCredential    = "X-Amz-Credential"
	queryDate          = "X-Amz-Date"
	queryExpires       = "X-Amz-Expires"
	querySignedHeaders = "X-Amz-SignedHeaders"
	querySignature     = "X-Amz-Signature"
	querySecurityToken = "X-Amz-Security-Token"
)

// EmptyPayloadHash is the hex SHA-256 of an empty payload: the
// X-Amz-Content-Sha256 of a request without a body, and the data hash of an
// aws-chunked body's final, empty chunk.
const EmptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// Canonical names of the headers that carry client authentication or payload framing.
const (
	headerAuthorization        = "Authorization"
	headerAmzDate              = "X-Amz-Date"
	headerDate                 = "Date"
	headerContentSHA256        = "X-Amz-Content-Sha256"
	headerSecurityToken        = "X-Amz-Security-Token"
	headerDecodedContentLength = "X-Amz-Decoded-Content-Length"
	headerTrailer              = "X-Amz-Trailer"
	signingAlgorithm           = "AWS4-HMAC-SHA256"
	scopeTerminator            = "aws4_request"
	serviceS3                  = "s3"
	unsignedPayload            = "UNSIGNED-PAYLOAD"
	streamingSigned            = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
	streamingSignedTrailer     = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
	streamingUnsignedTrailer   = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
	amzDateLayout              = "20060102T150405Z"
	scopeDateLayout            = "20060102"
	maxPresignExpiresSeconds   = 604800
	defaultMaxSkewMilliseconds = 900000
)

// AuthQueryParams lists the presigned-URL query parameters that authenticate
// the client to s3cond. The proxy removes them before forwarding: the backend
// request carries s3cond's own signature instead. Treat the slice as read-only.
var AuthQueryParams = []string{
	queryAlgorithm,
	queryCredential,
	queryDate,
	queryExpires,
	querySignedHeaders,
	querySignature,
	querySecurityToken,
}

// authHeaders are the headers IsAuthHeader reports, in canonical form.
var authHeaders = map[string]bool{
	headerAuthorization:        true,
	headerAmzDate:              true,
	headerContentSHA256:        true,
	headerSecurityToken:        true,
	headerDecodedContentLength: true,
	headerTrailer:              true,
}

// IsAuthHeader reports whether the header name (any case) is client
// authentication or payload framing that must not be forwarded to the backend:
// Authorization, X-Amz-Date, X-Amz-Content-Sha256, X-Amz-Security-Token,
// X-Amz-Decoded-Content-Length and X-Amz-Trailer.
func IsAuthHeader(name string) bool {
	return authHeaders[http.CanonicalHeaderKey(name)]
}

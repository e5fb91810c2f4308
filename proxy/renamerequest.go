package proxy

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"

	"github.com/s3cond/s3cond/precondition"
	"github.com/s3cond/s3cond/s3err"
)

// RenameObject's request headers (docs/spec.md, "RenameObject").
const (
	renameSourceHeader = "x-amz-rename-source"
	clientTokenHeader  = "x-amz-client-token"
	// maxClientToken is S3's bound on x-amz-client-token, in characters
	// of ASCII 33–126.
	maxClientToken = 64
)

// renameRequest is a RenameObject as s3cond checked it: the source and
// destination keys in the call's bucket, the destination's If-Match /
// If-None-Match, and the client token ("" when none was sent).
type renameRequest struct {
	bucket, source, destination string
	dstConds                    precondition.Conditions
	header                      http.Header
	token                       string
}

// parseRename reads a RenameObject's headers in S3's terms. The source is
// "[/]bucket/key", URL-encoded, as the service model's pattern has it; a
// source in another bucket is refused (a rename stays in its bucket).
func parseRename(c *call) (renameRequest, error) {
	req := renameRequest{bucket: c.target.Bucket, destination: c.target.Key, header: renameHeaders(c)}
	values := req.header.Values(renameSourceHeader)
	if len(values) != 1 {
		return req, invalidRenameSource("The x-amz-rename-source header must be given once.")
	}
	decoded, err := url.PathUnescape(values[0])
	if err != nil {
		return req, invalidRenameSource("Invalid rename source encoding.")
	}
	bucket, key, ok := strings.Cut(strings.TrimPrefix(decoded, "/"), "/")
	switch {
	case !ok || bucket == "" || key == "":
		return req, invalidRenameSource("The rename source must name a bucket and a key.")
	case bucket != c.target.Bucket:
		return req, s3err.Newf(s3err.InvalidRequest, "The rename source must be in the destination's bucket.")
	case strings.HasSuffix(key, "/") || strings.HasSuffix(req.destination, "/"):
		return req, s3err.Newf(s3err.InvalidRequest, "RenameObject does not rename keys that end with a slash.")
	case key == req.destination || c.backend.KeyPolicy.Check(key) == nil &&
		c.backend.KeyPolicy.LeaseKey(key) == c.backend.KeyPolicy.LeaseKey(req.destination):
		// Under key_policy: normalize, "a//b" and "a/b" are one object.
		return req, s3err.Newf(s3err.InvalidRequest, "The rename source and destination are the same key.")
	}
	if err := c.backend.KeyPolicy.Check(key); err != nil {
		return req, invalidRenameSource("Invalid rename source object key.")
	}
	req.source = key
	if req.token, err = parseClientToken(req.header); err != nil {
		return req, err
	}
	req.dstConds, err = precondition.ParseWrite(req.header)
	return req, err
}

// renameHeaders is the request's headers with the x-amz-rename-* and
// x-amz-client-token parameters a presigning SDK hoisted into the query
// added, as S3 reads them: a condition sent that way must not be lost.
// One given both ways counts twice, and a source so given is refused.
func renameHeaders(c *call) http.Header {
	h, cloned := c.r.Header, false
	for name, values := range c.parsedQuery {
		lower := strings.ToLower(name)
		if !strings.HasPrefix(lower, "x-amz-rename-source") && lower != clientTokenHeader {
			continue
		}
		if !cloned {
			h, cloned = h.Clone(), true // the client's headers are not changed
		}
		for _, v := range values {
			h.Add(name, v)
		}
	}
	return h
}

// parseClientToken checks x-amz-client-token: at most 64 characters, each
// printable ASCII (33–126).
func parseClientToken(h http.Header) (string, error) {
	values := h.Values(clientTokenHeader)
	switch {
	case len(values) == 0:
		return "", nil
	case len(values) > 1:
		return "", invalidClientToken()
	}
	token := values[0]
	if token == "" || len(token) > maxClientToken {
		return "", invalidClientToken()
	}
	for i := 0; i < len(token); i++ {
		if token[i] < 33 || token[i] > 126 {
			return "", invalidClientToken()
		}
	}
	return token, nil
}

func invalidClientToken() *s3err.Error {
	return s3err.Newf(s3err.InvalidArgument, "The client token must be 1 to 64 printable ASCII characters.").
		With("ArgumentName", clientTokenHeader)
}

func invalidRenameSource(message string) *s3err.Error {
	return s3err.Newf(s3err.InvalidArgument, "%s", message).With("ArgumentName", renameSourceHeader)
}

// renameConditionHeaders are the headers whose values make a rename's
// parameters, besides its keys: a client token's replay must repeat them.
var renameConditionHeaders = []string{
	"If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since",
	precondition.HeaderRenameSourceIfMatch, precondition.HeaderRenameSourceIfNoneMatch,
	precondition.HeaderRenameSourceIfModifiedSince, precondition.HeaderRenameSourceIfUnmodifiedSince,
}

// parametersDigest is what a client token's record keeps of the request:
// a digest of its bucket, keys and conditions, fixed in size whatever
// their length.
func (r renameRequest) parametersDigest() string {
	h := sha256.New()
	for _, part := range []string{r.bucket, r.source, r.destination} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	for _, name := range renameConditionHeaders {
		h.Write([]byte(strings.Join(r.header.Values(name), ",")))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// tokenPath is the lease table path of a client token's record: bound to
// the principal that sent it (a token is only ever compared with its own
// sender's), a digest so the row's size does not depend on either. Its
// "#" cannot start a bucket name, so no lease row of an object shares it.
func tokenPath(accessKeyID, bucket, token string) string {
	sum := sha256.Sum256([]byte(accessKeyID + "\x00" + bucket + "\x00" + token))
	return "#rename-token/" + hex.EncodeToString(sum[:])
}

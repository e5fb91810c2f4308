package proxy

import (
	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/requestline"
)

// refuseStraySignatureV2Params answers a request that carries a SigV2
// presigned-URL parameter (AWSAccessKeyId, Expires, Signature) but was not
// authenticated by them, as s3cond answered before it accepted SigV2: 501
// for a parameter it does not forward. Classify lets them through so that a
// SigV2 presigned URL routes; only its verification makes them
// authentication, which checkQuery then drops.
func refuseStraySignatureV2Params(c *call) error {
	if c.auth.SignatureV2 && c.auth.Presigned {
		return nil
	}
	for _, name := range requestline.SignatureV2Params {
		if _, present := c.parsedQuery[name]; present {
			return operation.NotForwardedParameter(name)
		}
	}
	return nil
}

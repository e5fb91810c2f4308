package proxy

import "github.com/s3cond/s3cond/sigv4"

// emptySHA256 is sigv4.EmptyPayloadHash (the one definition) under the short
// name the proxy's tests sign bodiless requests with.
const emptySHA256 = sigv4.EmptyPayloadHash

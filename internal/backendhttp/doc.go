// Package backendhttp is s3cond's HTTP client side towards the store: the
// transport the re-signed backend requests go out on. It knows HTTP/1.1
// and sockets, nothing of S3: SpliceTransport sends GETs, HEADs, DELETEs
// and small PUTs on its own pooled connections (splicing response bodies
// socket to socket), NewBackendTransport is the net/http transport for
// everything else, and ResettingDialer makes every connection they dial end
// with a TCP reset, so that a cut-off upload is never taken as complete.
//
// The S3 front (package proxy) maps what this package returns onto S3
// errors: ErrShortBody and ErrLongBody for a request body whose length is
// not the one declared, and net and context errors for the rest.
package backendhttp

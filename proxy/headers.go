package proxy

import (
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strings"

	"github.com/s3cond/s3cond/internal/requestline"
	"github.com/s3cond/s3cond/sigv4"
)

// headerSet is a fixed set of canonical header names.
type headerSet map[string]bool

func newHeaderSet(names ...string) headerSet {
	set := headerSet{}
	for _, n := range names {
		set[textproto.CanonicalMIMEHeaderKey(n)] = true
	}
	return set
}

// hopByHopHeaders belong to one connection and are never forwarded (RFC 9110
// §7.6.1), in either direction. Headers a Connection header names are too.
var hopByHopHeaders = newHeaderSet("Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade")

// requestOnlyDropped are inbound headers s3cond consumes itself: Go's client
// handles 100-continue, and the length is set for the decoded body sent.
var requestOnlyDropped = newHeaderSet("Expect", "Content-Length")

// writeConditionHeaders are stripped from writes that s3cond enforces with
// leases: the backend may not support them, or may half-support them
// (DeleteObject's size and time conditions among them).
var writeConditionHeaders = newHeaderSet("If-Match", "If-None-Match",
	"X-Amz-If-Match-Size", "X-Amz-If-Match-Last-Modified-Time")

// connectionListed is the set of headers a Connection header names (nil
// when there are none, as almost always).
func connectionListed(h http.Header) headerSet {
	var listed headerSet
	for _, v := range h.Values("Connection") {
		for _, name := range strings.Split(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				if listed == nil {
					listed = headerSet{}
				}
				listed[textproto.CanonicalMIMEHeaderKey(name)] = true
			}
		}
	}
	return listed
}

// isChecksumHeader reports whether name is of the client's x-amz-checksum-*
// family. It runs on every header of every request, so it compares without
// lower-casing (which would allocate).
func isChecksumHeader(name string) bool {
	const prefix = "x-amz-checksum-"
	return len(name) > len(prefix) && strings.EqualFold(name[:len(prefix)], prefix) ||
		strings.EqualFold(name, "x-amz-sdk-checksum-algorithm")
}

// outboundHeader builds the backend request's header from the client's:
// hop-by-hop, authentication and framing headers removed, aws-chunked
// dropped from Content-Encoding, checksums kept only when forwarded. The
// headers its Connection header names are dropped too; checkConnectionHeader
// has refused any request whose Connection header names more than hop-by-hop
// headers, so this drops nothing that was signed or classified on.
func outboundHeader(in http.Header, forwardChecksums, stripConditions bool) http.Header {
	out := make(http.Header, outboundHeaderRoom(in))
	listed := connectionListed(in)
	for name, values := range in {
		switch {
		case hopByHopHeaders[name], requestOnlyDropped[name], listed[name], sigv4.IsAuthHeader(name),
			stripConditions && writeConditionHeaders[name]:
			continue
		case isChecksumHeader(name) && !forwardChecksums:
			continue
		case name == "Content-Encoding":
			if enc := sigv4.StripAWSChunked(strings.Join(values, ",")); enc != "" {
				out.Set(name, enc)
			}
			continue
		}
		// The client's values are shared, not copied (one allocation per
		// header): nothing changes a header value in place, and the full
		// slice expression makes any append copy first.
		out[name] = values[:len(values):len(values)]
	}
	return out
}

// droppedOnTheWay are the headers of a signed request that outboundHeader
// drops, and the re-signer then sets again (all but Content-Length).
var droppedOnTheWay = [...]string{"Authorization", "X-Amz-Date", "X-Amz-Content-Sha256", "Content-Length"}

// outboundHeaderRoom is the size hint for the backend request's header map:
// what is kept of in, plus the three headers the re-signer adds. Hinting
// len(in) instead would make a typical SDK PutObject (nine or ten headers)
// a map past eight entries, a table of four allocations rather than one
// group, when what the backend is sent fits in eight.
func outboundHeaderRoom(in http.Header) int {
	room := len(in) + 3
	for _, name := range droppedOnTheWay {
		if _, present := in[name]; present {
			room--
		}
	}
	return room
}

// copyResponseHeader copies the backend's response header, minus hop-by-hop
// headers, under the names S3 gives them (s3ResponseName: x-amz-* in lower
// case, so user metadata keeps its case), and stamps s3cond's own request
// ID in place of the backend's. The store's Server and x-amz-id-2 (its
// host ID) name the store: s3cond's x-amz-id-2 (requestIDMiddleware)
// stands in their place.
func copyResponseHeader(dst, src http.Header, requestID string) {
	listed := connectionListed(src)
	for name, values := range src {
		if hopByHopHeaders[name] || listed[name] || storeResponseHeaders[name] {
			continue
		}
		dst[s3ResponseName(name)] = values // src is the backend's answer, read once: no copy
	}
	if backendID := src.Get("X-Amz-Request-Id"); backendID != "" {
		dst.Set("X-S3cond-Backend-Request-Id", backendID)
	}
	// The request-ID middleware set it already (under S3's name); a
	// handler without it gets it here.
	//lint:ignore SA1008 S3 spells it in lower case; the map key is its wire spelling on purpose.
	if idValues := dst[requestIDHeader]; len(idValues) != 1 || idValues[0] != requestID {
		dst[requestIDHeader] = []string{requestID}
	}
}

// storeResponseHeaders are backend response headers that describe the
// store and its request, not the answer.
var storeResponseHeaders = newHeaderSet("X-Amz-Request-Id", "X-Amz-Id-2", "Server")

// isAuthQueryParam compares the decoded name: X-Amz-Signatur%65 is the
// same parameter to a store as X-Amz-Signature.
func isAuthQueryParam(rawName string) bool {
	if strings.ContainsAny(rawName, "%+") {
		if decoded, err := url.QueryUnescape(rawName); err == nil {
			rawName = decoded
		}
	}
	for _, a := range sigv4.AuthQueryParams {
		if strings.EqualFold(rawName, a) {
			return true
		}
	}
	// Only a SigV2 presigned request gets this far with these
	// (refuseStraySignatureV2Params); they are its authentication.
	return slices.Contains(requestline.SignatureV2Params, rawName)
}

package sigv4

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// resigner signs every outbound request with s3cond's backend credentials.
type resigner struct {
	next   http.RoundTripper
	creds  aws.CredentialsProvider
	region string
	clock  signingClock
	keys   signingKeyCache
}

// NewResigner returns a RoundTripper that signs each outbound request for the
// backend with SigV4 (service "s3"), last, just before next.RoundTrip. It
// signs what aws-sdk-go-v2's signer signs (backendsign.go), from pooled
// buffers. It works on a copy of the request and never reads or buffers the
// body.
//
// The payload hash is the request's X-Amz-Content-Sha256 header if set (hex
// or UNSIGNED-PAYLOAD), else the empty-body hash when there is no body, else
// UNSIGNED-PAYLOAD; the header is set to it, as S3 requires. Any inbound
// Authorization is dropped. The raw query goes out exactly as given. The path
// goes out in S3's canonical encoding (each byte outside A-Za-z0-9-_.~/ as
// %XX): it names the same key, and it is the one spelling that backends which
// canonicalise the path and backends which sign it verbatim agree on.
func NewResigner(next http.RoundTripper, creds aws.CredentialsProvider, region string) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	if _, cached := creds.(*aws.CredentialsCache); !cached {
		creds = aws.NewCredentialsCache(creds)
	}
	return &resigner{next: next, creds: creds, region: region, clock: signingClock{now: time.Now}}
}

func (s *resigner) RoundTrip(req *http.Request) (*http.Response, error) {
	creds, err := s.creds.Retrieve(req.Context())
	if err != nil {
		closeBody(req)
		return nil, fmt.Errorf("sigv4: retrieve backend credentials: %w", err)
	}
	stamp := s.clock.stamp()
	out, values, payloadHash := outboundCopy(req, stamp.amzDate, creds.SessionToken)
	key := s.keys.get(signingKeyID{
		accessKeyID: creds.AccessKeyID, secret: creds.SecretAccessKey,
		date: stamp.day, region: s.region, service: serviceS3,
	})
	scratch := getSignScratch()
	authorization := signBackendRequest(scratch, out, signingHost(out), payloadHash,
		creds.AccessKeyID, &key, s.region, stamp.amzDate, stamp.day)
	scratch.release()
	values = append(values, authorization)
	out.Header[headerAuthorization] = values[len(values)-1:]
	return s.next.RoundTrip(out)
}

// outboundCopy returns a shallow copy of req with a header map of its own
// (the values are shared: nothing here or below changes them in place)
// holding X-Amz-Date, the payload hash and any session token, without
// Authorization; and the path put in S3's canonical encoding. values backs
// the header values set here and has room for Authorization's.
func outboundCopy(req *http.Request, amzDate, sessionToken string) (out *http.Request, values []string, payloadHash string) {
	out = new(http.Request)
	*out = *req
	out.Header = make(http.Header, len(req.Header)+3)
	for name, values := range req.Header {
		if name != headerAuthorization {
			out.Header[name] = values
		}
	}
	// One backing array for the values set here; each header gets a
	// full slice of it, so that an append to one cannot reach the next.
	values = make([]string, 0, 4)
	add := func(name, value string) {
		values = append(values, value)
		out.Header[name] = values[len(values)-1 : len(values) : len(values)]
	}
	add(headerAmzDate, amzDate)
	if sessionToken != "" {
		add(headerSecurityToken, sessionToken)
	}
	payloadHash = out.Header.Get(headerContentSHA256)
	if payloadHash == "" {
		payloadHash = unsignedPayload
		if (out.Body == nil || out.Body == http.NoBody) && out.ContentLength == 0 {
			payloadHash = EmptyPayloadHash
		}
		add(headerContentSHA256, payloadHash)
	}
	if out.URL.Opaque == "" {
		if encoded := uriEncode(out.URL.Path, false); out.URL.EscapedPath() != encoded {
			u := *out.URL
			u.RawPath = encoded
			out.URL = &u
		}
	}
	return out, values, payloadHash
}

// signingHost is the Host the request goes out with, without a default port
// (as aws-sdk-go-v2's signer does, which also sends it so).
func signingHost(r *http.Request) string {
	host := r.Host
	if host == "" {
		host = r.URL.Host
	}
	colon := strings.LastIndexByte(host, ':')
	if colon < 0 || strings.Contains(host[colon:], "]") {
		return host
	}
	port := host[colon+1:]
	if (strings.EqualFold(r.URL.Scheme, "http") && port == "80") || (strings.EqualFold(r.URL.Scheme, "https") && port == "443") || port == "" {
		r.Host = host[:colon]
		return r.Host
	}
	return host
}

// closeBody honours RoundTripper's contract to close the body on every path.
func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

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
// buffers. RoundTrip works on a copy of the request, RoundTripOwned
// (OwnedRoundTripper) on a request its caller gives away; neither reads or
// buffers the body.
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
	return s.roundTrip(req, false)
}

// OwnedRoundTripper is a RoundTripper that can also send a request its
// caller gives away. NewResigner's implements it.
type OwnedRoundTripper interface {
	http.RoundTripper
	// RoundTripOwned is RoundTrip for a request the caller built for this
	// one call and does not touch again: it may be changed in place (its
	// header map gains the signature's headers and loses any
	// Authorization), where RoundTrip must work on a copy.
	RoundTripOwned(req *http.Request) (*http.Response, error)
}

var _ OwnedRoundTripper = (*resigner)(nil)

// RoundTripOwned signs req itself rather than a copy: for s3cond's own
// backend requests, built per call, that spares a copy of the request and
// of its header map (three of a forwarded GET's allocations).
func (s *resigner) RoundTripOwned(req *http.Request) (*http.Response, error) {
	return s.roundTrip(req, true)
}

func (s *resigner) roundTrip(req *http.Request, owned bool) (*http.Response, error) {
	creds, err := s.creds.Retrieve(req.Context())
	if err != nil {
		closeBody(req)
		return nil, fmt.Errorf("sigv4: retrieve backend credentials: %w", err)
	}
	stamp := s.clock.stamp()
	out := req
	if owned {
		delete(out.Header, headerAuthorization)
	} else {
		out = outboundCopy(req)
	}
	values, payloadHash := setSigningHeaders(out, stamp.amzDate, creds.SessionToken)
	key := s.keys.get(signingKeyID{
		accessKeyID: creds.AccessKeyID, secret: creds.SecretAccessKey,
		date: stamp.day, region: s.region, service: serviceS3,
	})
	scratch := getSignScratch()
	authorization := signBackendRequest(scratch, out, signingHost(out), payloadHash,
		creds.AccessKeyID, key, s.region, stamp.amzDate, stamp.day)
	scratch.release()
	values = append(values, authorization)
	out.Header[headerAuthorization] = values[len(values)-1:]
	return s.next.RoundTrip(out)
}

// outboundCopy returns a shallow copy of req with a header map of its own
// (the values are shared: nothing here or below changes them in place),
// without Authorization, and room for the headers setSigningHeaders adds.
func outboundCopy(req *http.Request) *http.Request {
	out := new(http.Request)
	*out = *req
	out.Header = make(http.Header, len(req.Header)+3)
	for name, values := range req.Header {
		if name != headerAuthorization {
			out.Header[name] = values
		}
	}
	return out
}

// setSigningHeaders sets X-Amz-Date, the payload hash (unless out has one)
// and any session token on out, and puts its path in S3's canonical
// encoding. The returned values backs the header values set here (each
// header a full slice of it, so that an append to one cannot reach the
// next) and has room for Authorization's.
func setSigningHeaders(out *http.Request, amzDate, sessionToken string) (values []string, payloadHash string) {
	values = make([]string, 0, 4)
	values = setValue(out.Header, values, headerAmzDate, amzDate)
	if sessionToken != "" {
		values = setValue(out.Header, values, headerSecurityToken, sessionToken)
	}
	payloadHash = out.Header.Get(headerContentSHA256)
	if payloadHash == "" {
		payloadHash = unsignedPayload
		if (out.Body == nil || out.Body == http.NoBody) && out.ContentLength == 0 {
			payloadHash = EmptyPayloadHash
		}
		values = setValue(out.Header, values, headerContentSHA256, payloadHash)
	}
	if out.URL.Opaque == "" {
		if encoded := uriEncode(out.URL.Path, false); out.URL.EscapedPath() != encoded {
			u := *out.URL
			u.RawPath = encoded
			out.URL = &u
		}
	}
	return values, payloadHash
}

// setValue appends value to values and sets h[name] to a full slice of
// that one element.
func setValue(h http.Header, values []string, name, value string) []string {
	values = append(values, value)
	h[name] = values[len(values)-1 : len(values) : len(values)]
	return values
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

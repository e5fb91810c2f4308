package sigv4

import (
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// resigner signs every outbound request with s3cond's backend credentials.
type resigner struct {
	next   http.RoundTripper
	creds  aws.CredentialsProvider
	region string
	signer *v4.Signer
	now    func() time.Time
}

// NewResigner returns a RoundTripper that signs each outbound request for the
// backend with aws-sdk-go-v2's SigV4 signer (service "s3"), last, just before
// next.RoundTrip. It works on a clone and never reads or buffers the body.
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
	return &resigner{
		next:   next,
		creds:  creds,
		region: region,
		signer: v4.NewSigner(func(o *v4.SignerOptions) {
			o.DisableURIPathEscaping = true // the path is already S3-encoded; sign it as sent
		}),
		now: time.Now,
	}
}

func (s *resigner) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	out := req.Clone(ctx)
	out.Header.Del(headerAuthorization)

	payloadHash := out.Header.Get(headerContentSHA256)
	if payloadHash == "" {
		payloadHash = unsignedPayload
		if (out.Body == nil || out.Body == http.NoBody) && out.ContentLength == 0 {
			payloadHash = EmptyPayloadHash
		}
		out.Header.Set(headerContentSHA256, payloadHash)
	}

	if out.URL.Opaque == "" {
		if encoded := uriEncode(out.URL.Path, false); out.URL.EscapedPath() != encoded {
			out.URL.RawPath = encoded
		}
	}

	creds, err := s.creds.Retrieve(ctx)
	if err != nil {
		closeBody(req)
		return nil, fmt.Errorf("sigv4: retrieve backend credentials: %w", err)
	}
	// The signer parses RawQuery with url.Query, which drops pairs it cannot
	// parse (";", bad escapes) that the backend still signs; hand it the
	// canonical query instead, then send the bytes as given, which decode to
	// the same parameters on the backend.
	rawQuery := out.URL.RawQuery
	out.URL.RawQuery = canonicalQuery(rawQuery, false)
	if err := s.signer.SignHTTP(ctx, creds, out, payloadHash, serviceS3, s.region, s.now().UTC()); err != nil {
		closeBody(req)
		return nil, fmt.Errorf("sigv4: sign backend request: %w", err)
	}
	out.URL.RawQuery = rawQuery
	return s.next.RoundTrip(out)
}

// closeBody honours RoundTripper's contract to close the body on every path.
func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// Package sigv4 authenticates clients that sign with AWS Signature Version 4
// (Authorization header or presigned URL, every S3 payload mode) and re-signs
// outbound requests for the backend.
package sigv4

import (
	"crypto/sha256"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/s3cond/s3cond/s3err"
)

// Credentials finds the secret of a client access key.
type Credentials interface {
	Secret(accessKeyID string) (secret string, ok bool)
}

// PayloadMode is how the client protected the body (x-amz-content-sha256).
type PayloadMode int

const (
	PayloadUnsigned                 PayloadMode = iota // UNSIGNED-PAYLOAD (and presigned URLs)
	PayloadSHA256                                      // hex SHA-256 of the body
	PayloadStreamingSigned                             // STREAMING-AWS4-HMAC-SHA256-PAYLOAD
	PayloadStreamingSignedTrailer                      // STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER
	PayloadStreamingUnsignedTrailer                    // STREAMING-UNSIGNED-PAYLOAD-TRAILER
)

// String returns the x-amz-content-sha256 spelling of the mode.
func (m PayloadMode) String() string {
	switch m {
	case PayloadUnsigned:
		return unsignedPayload
	case PayloadSHA256:
		return "SHA256"
	case PayloadStreamingSigned:
		return streamingSigned
	case PayloadStreamingSignedTrailer:
		return streamingSignedTrailer
	case PayloadStreamingUnsignedTrailer:
		return streamingUnsignedTrailer
	}
	return "PayloadMode(" + strconv.Itoa(int(m)) + ")"
}

// isSignedStreaming reports whether chunks carry signatures chained from the
// request signature.
func (m PayloadMode) isSignedStreaming() bool {
	return m == PayloadStreamingSigned || m == PayloadStreamingSignedTrailer
}

// Streaming reports whether the body is aws-chunked (any STREAMING-* mode),
// which S3 accepts only on PutObject and UploadPart.
func (m PayloadMode) Streaming() bool {
	return m == PayloadStreamingSigned || m == PayloadStreamingSignedTrailer || m == PayloadStreamingUnsignedTrailer
}

// defaultMaxSkew is S3's tolerance between a request's date and the server clock.
const defaultMaxSkew = 15 * time.Minute

// Verifier authenticates SigV4-signed S3 requests. It is safe for concurrent
// use; do not copy it after first use.
type Verifier struct {
	Credentials Credentials
	Region      string           // region clients must sign for; "" accepts any region in the scope
	Now         func() time.Time // nil means time.Now
	MaxSkew     time.Duration    // 0 means 15 minutes
	// SessionTokens accepts X-Amz-Security-Token, as for temporary
	// credentials. Off (the default), the client keys are permanent ones
	// and a request carrying a token is 400 InvalidToken, as S3 answers a
	// token sent with a permanent key.
	SessionTokens bool
	// SignatureV2 also accepts AWS Signature Version 2 (v2.go), header and
	// presigned URL, as auth.signature_v2 asks. Off, a SigV2 request is
	// S3's 400 InvalidRequest naming AWS4-HMAC-SHA256.
	SignatureV2 bool
	// VirtualHostBucket names the bucket of a virtual-hosted Host ("" for
	// none); SigV2 signs the bucket in the resource. nil: path style only.
	VirtualHostBucket func(host string) string

	// service is the signing service clients must name; "" means "s3". Tests
	// of the generic AWS suite set it to "service".
	service string
	keys    signingKeyCache
	dates   amzDateCache
}

// NewVerifier returns a Verifier for the given client credentials and region.
func NewVerifier(creds Credentials, region string) *Verifier {
	return &Verifier{Credentials: creds, Region: region}
}

// Request is what authentication learned.
type Request struct {
	AccessKeyID string
	Anonymous   bool // neither Authorization header nor X-Amz-Algorithm query: caller decides (AccessDenied unless public)
	Presigned   bool
	// SignatureV2: verified by AWS Signature Version 2 (v2.go); with
	// Presigned, its AWSAccessKeyId, Expires and Signature parameters
	// authenticated the request.
	SignatureV2 bool
	Mode        PayloadMode
	Body        *Body // verifying reader of the decoded payload; never nil

	body Body // Body's storage
}

// Verify authenticates r (header auth or presigned URL) and returns the
// verifying body. It never reads the body itself. Errors are *s3err.Error.
func (v *Verifier) Verify(r *http.Request) (*Request, error) {
	return v.VerifyInto(r, nil)
}

// VerifyInto is Verify with a header-signed request's result in dst, when
// not nil: storage of the caller's (the proxy's request state), which
// spares an allocation on the common path; other kinds of request, and a
// nil dst, get a Request of their own.
func (v *Verifier) VerifyInto(r *http.Request, dst *Request) (*Request, error) {
	// A nil *s3err.Error must not become a non-nil error interface.
	req, err := v.verify(r, dst)
	if err != nil {
		return nil, err
	}
	return req, nil
}

func (v *Verifier) verify(r *http.Request, dst *Request) (*Request, *s3err.Error) {
	authorization, hasHeader := r.Header[headerAuthorization]
	var query url.Values
	if !hasHeader || v.SignatureV2 || mayNameParam(r.URL.RawQuery, queryAlgorithm) {
		// A header-signed request's query is decoded only if it may be
		// presigned too (refused below): most are not, and decoding allocates.
		query = parseQuery(r.URL.RawQuery)
	}
	presigned := isPresigned(query)
	if v.SignatureV2 {
		if req, handled, err := v.verifyV2(r, query, authorization, presigned); handled {
			return req, err
		}
	}
	switch {
	case hasHeader && presigned:
		return nil, s3err.Newf(s3err.InvalidArgument, "Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature query string parameter or the Authorization header should be specified").
			With("ArgumentName", headerAuthorization).
			With("ArgumentValue", "null")
	case hasHeader:
		if len(authorization) != 1 {
			return nil, headerMalformed("the request carries more than one Authorization header.")
		}
		return v.verifyHeaderAuth(r, authorization[0], dst)
	case presigned:
		return v.verifyPresigned(r, query)
	case query.Has("AWSAccessKeyId") && query.Has("Signature"):
		// A SigV2 presigned URL; see errUnsupportedAuthMechanism.
		return nil, errUnsupportedAuthMechanism()
	}
	return v.anonymous(r)
}

// mayNameParam reports whether a raw query could hold the parameter name
// (spelled exactly, or with any percent-escape, which decodes to the same
// parameter). A name without '+' or spaces cannot be spelled with '+'.
func mayNameParam(rawQuery, name string) bool {
	return strings.Contains(rawQuery, name) || strings.Contains(rawQuery, "%")
}

// anonymous lets the caller decide about an unsigned request; the body is
// still checked against any digest the client declared.
func (v *Verifier) anonymous(r *http.Request) (*Request, *s3err.Error) {
	mode, digest := PayloadUnsigned, ""
	if value := r.Header.Get(headerContentSHA256); value != "" {
		var err *s3err.Error
		if mode, digest, err = parsePayloadHash(value); err != nil {
			return nil, err
		}
		if mode.isSignedStreaming() {
			return nil, s3err.Newf(s3err.AccessDenied, "%s requires a signed request", value)
		}
	}
	req := &Request{Anonymous: true, Mode: mode}
	if err := req.initBody(r, digest, nil); err != nil {
		return nil, err
	}
	return req, nil
}

func (v *Verifier) verifyHeaderAuth(r *http.Request, authorization string, dst *Request) (*Request, *s3err.Error) {
	fields, perr := parseAuthorization(authorization)
	if perr != nil {
		return nil, perr
	}
	amzDate, rawDate, perr := v.requestDate(r.Header)
	if perr != nil {
		return nil, perr
	}
	if perr := v.checkScope(fields.credential, amzDate, headerMalformed, headerDateMismatch); perr != nil {
		return nil, perr
	}
	secret, ok := v.Credentials.Secret(fields.credential.accessKeyID)
	if !ok {
		return nil, s3err.New(s3err.InvalidAccessKeyID).With("AWSAccessKeyId", fields.credential.accessKeyID)
	}
	if perr := v.checkSessionToken(r, nil); perr != nil {
		return nil, perr
	}
	now := v.now()
	if skew := now.Sub(amzDate).Abs(); skew > v.maxSkew() {
		return nil, s3err.New(s3err.RequestTimeTooSkewed).
			With("RequestTime", rawDate).
			With("ServerTime", now.UTC().Format(time.RFC3339)).
			With("MaxAllowedSkewMilliseconds", strconv.FormatInt(v.maxSkew().Milliseconds(), 10))
	}
	if perr := requireSignedHost(fields); perr != nil {
		return nil, perr
	}
	if perr := requireSignedAmzHeaders(r.Header, fields); perr != nil {
		return nil, perr
	}
	payloadHash := r.Header.Get(headerContentSHA256)
	if payloadHash == "" {
		return nil, s3err.Newf(s3err.InvalidRequest, "Missing required header for this request: x-amz-content-sha256")
	}
	mode, digest, perr := parsePayloadHash(payloadHash)
	if perr != nil {
		return nil, perr
	}
	key := v.signingKey(fields.credential, secret)
	if perr := checkSignature(r, fields, payloadHash, amzDate, key, false); perr != nil {
		return nil, perr
	}
	return v.authenticated(r, fields, amzDate, key, mode, digest, false, dst)
}

func (v *Verifier) verifyPresigned(r *http.Request, query map[string][]string) (*Request, *s3err.Error) {
	fields, perr := parsePresignQuery(query)
	if perr != nil {
		return nil, perr
	}
	credentialError := func(detail string) *s3err.Error {
		return queryParamsError("Error parsing the X-Amz-Credential parameter; " + detail)
	}
	if perr := v.checkScope(fields.credential, fields.amzDate, credentialError, presignDateMismatch); perr != nil {
		return nil, perr
	}
	secret, ok := v.Credentials.Secret(fields.credential.accessKeyID)
	if !ok {
		return nil, s3err.New(s3err.InvalidAccessKeyID).With("AWSAccessKeyId", fields.credential.accessKeyID)
	}
	if perr := v.checkSessionToken(r, query); perr != nil {
		return nil, perr
	}
	now := v.now()
	if fields.amzDate.Sub(now) > v.maxSkew() {
		return nil, s3err.Newf(s3err.AccessDenied, "Request is not valid yet").
			With("X-Amz-Date", fields.amzDate.UTC().Format(amzDateLayout)).
			With("ServerTime", now.UTC().Format(time.RFC3339))
	}
	if expiry := fields.amzDate.Add(fields.expires); now.After(expiry) {
		return nil, s3err.Newf(s3err.AccessDenied, "Request has expired").
			With("X-Amz-Expires", strconv.FormatInt(int64(fields.expires/time.Second), 10)).
			With("Expires", expiry.UTC().Format(time.RFC3339)).
			With("ServerTime", now.UTC().Format(time.RFC3339))
	}
	if perr := requireSignedHost(fields.authFields); perr != nil {
		return nil, perr
	}
	if perr := requireSignedAmzHeaders(r.Header, fields.authFields); perr != nil {
		return nil, perr
	}
	// A presigned URL covers no payload unless the client sent (and so
	// signed, through the canonical request's last line) a payload hash.
	payloadHash, mode, digest := unsignedPayload, PayloadUnsigned, ""
	if value := r.Header.Get(headerContentSHA256); value != "" {
		if mode, digest, perr = parsePayloadHash(value); perr != nil {
			return nil, perr
		}
		payloadHash = value
	}
	key := v.signingKey(fields.credential, secret)
	if perr := checkSignature(r, fields.authFields, payloadHash, fields.amzDate, key, true); perr != nil {
		return nil, perr
	}
	return v.authenticated(r, fields.authFields, fields.amzDate, key, mode, digest, true, nil)
}

// authenticated wraps the body of a request whose signature held, in dst
// if not nil.
func (v *Verifier) authenticated(r *http.Request, fields authFields, amzDate time.Time, key *signingKey, mode PayloadMode, digest string, presigned bool, dst *Request) (*Request, *s3err.Error) {
	var chunk *ChunkSigning
	if mode.isSignedStreaming() {
		chunk = &ChunkSigning{
			SigningKey:    key.bytes[:],
			Time:          amzDate,
			Scope:         fields.credential.scope(),
			SeedSignature: fields.signature,
		}
	}
	req := dst
	if req == nil {
		req = new(Request)
	}
	*req = Request{
		AccessKeyID: fields.credential.accessKeyID,
		Presigned:   presigned,
		Mode:        mode,
	}
	if err := req.initBody(r, digest, chunk); err != nil {
		return nil, err
	}
	return req, nil
}

// initBody sets up req.Body, the verifying reader of r's body, in req's own
// allocation.
func (req *Request) initBody(r *http.Request, digest string, chunk *ChunkSigning) *s3err.Error {
	raw := r.Body
	if raw == nil {
		raw = http.NoBody
	}
	err := req.body.init(raw, BodySpec{
		Mode:          req.Mode,
		PayloadSHA256: digest,
		ContentLength: r.ContentLength,
		Header:        r.Header,
		Chunk:         chunk,

		ObjectChecksumHeaders: completesMultipartUpload(r),
	})
	if err != nil {
		return s3err.As(err)
	}
	req.Body = &req.body
	return nil
}

// completesMultipartUpload reports whether r is a CompleteMultipartUpload
// (POST ?uploadId=…, as S3 routes it): its x-amz-checksum-* headers are the
// checksum of the object being assembled, not of the XML body.
func completesMultipartUpload(r *http.Request) bool {
	if r.Method != http.MethodPost {
		return false
	}
	query := parseQuery(r.URL.RawQuery)
	_, uploadID := query["uploadId"]
	_, uploads := query["uploads"]
	return uploadID && !uploads
}

// checkScope compares the credential scope with the request date and the
// verifier's configuration; malformed builds the error in the style of the
// authentication form (header or query), and dateMismatch is that form's
// words for a scope date other than the request's. The order is S3's: the
// scope's own shape (service, terminator, date format) before its agreement
// with the request (date, region).
func (v *Verifier) checkScope(c credentialScope, amzDate time.Time, malformed func(string) *s3err.Error, dateMismatch func(scopeDate, requestDate string) string) *s3err.Error {
	if service := v.signingService(); c.service != service {
		return malformed(`incorrect service "` + c.service + `". This endpoint belongs to "` + service + `".`)
	}
	if c.terminator != scopeTerminator {
		return malformed(`incorrect terminal "` + c.terminator + `". This endpoint uses "` + scopeTerminator + `".`)
	}
	// The request's day formatted on the stack: no allocation when it matches.
	var day [len(scopeDateLayout)]byte
	if want := appendScopeDay(day[:0], amzDate); c.date != string(want) {
		if _, err := time.Parse(scopeDateLayout, c.date); err != nil || len(c.date) != len(scopeDateLayout) {
			return malformed(`incorrect date format "` + c.date + `". This date in the credential must be in the format "yyyyMMdd".`)
		}
		return malformed(dateMismatch(c.date, string(want)))
	}
	if v.Region != "" && c.region != v.Region {
		return malformed("the region '"+c.region+"' is wrong; expecting '"+v.Region+"'").With("Region", v.Region)
	}
	return nil
}

// headerDateMismatch is S3's text for an Authorization header whose scope
// date is not the request's.
func headerDateMismatch(string, string) string {
	return "Invalid credential date. Date is not the same as X-Amz-Date."
}

// presignDateMismatch is the presigned-URL form, which names both dates.
func presignDateMismatch(scopeDate, requestDate string) string {
	return `Invalid credential date "` + scopeDate + `". This date is not the same as X-Amz-Date: "` + requestDate + `".`
}

// requestDate reads X-Amz-Date, or Date when X-Amz-Date is absent, and also
// returns the value as sent for error messages.
func (v *Verifier) requestDate(h http.Header) (time.Time, string, *s3err.Error) {
	if raw := h.Get(headerAmzDate); raw != "" {
		t, err := v.dates.parse(raw)
		if err != nil {
			return time.Time{}, raw, errNoValidDate()
		}
		return t, raw, nil
	}
	if raw := h.Get(headerDate); raw != "" {
		t, err := http.ParseTime(raw)
		if err != nil {
			return time.Time{}, raw, errNoValidDate()
		}
		return t, raw, nil
	}
	return time.Time{}, "", errNoValidDate()
}

func errNoValidDate() *s3err.Error {
	return s3err.Newf(s3err.AccessDenied, "AWS authentication requires a valid Date or x-amz-date header")
}

// parsePayloadHash interprets x-amz-content-sha256. digest is the lower-case
// hex digest in PayloadSHA256 mode.
func parsePayloadHash(value string) (mode PayloadMode, digest string, err *s3err.Error) {
	switch value {
	case unsignedPayload:
		return PayloadUnsigned, "", nil
	case streamingSigned:
		return PayloadStreamingSigned, "", nil
	case streamingSignedTrailer:
		return PayloadStreamingSignedTrailer, "", nil
	case streamingUnsignedTrailer:
		return PayloadStreamingUnsignedTrailer, "", nil
	}
	var digestBytes [sha256.Size]byte
	if decodeHex(digestBytes[:], value) {
		return PayloadSHA256, strings.ToLower(value), nil
	}
	return 0, "", s3err.Newf(s3err.InvalidArgument, "x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-UNSIGNED-PAYLOAD-TRAILER, STREAMING-AWS4-HMAC-SHA256-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER or a valid sha256 value.").
		With("ArgumentName", "x-amz-content-sha256").
		With("ArgumentValue", value)
}

func (v *Verifier) signingKey(c credentialScope, secret string) *signingKey {
	return v.keys.get(signingKeyID{
		accessKeyID: c.accessKeyID,
		secret:      secret,
		date:        c.date,
		region:      c.region,
		service:     c.service,
	})
}

func (v *Verifier) signingService() string {
	if v.service != "" {
		return v.service
	}
	return serviceS3
}

func (v *Verifier) now() time.Time {
	if v.Now != nil {
		return v.Now()
	}
	return time.Now()
}

func (v *Verifier) maxSkew() time.Duration {
	if v.MaxSkew > 0 {
		return v.MaxSkew
	}
	return defaultMaxSkew
}

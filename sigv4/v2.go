package sigv4

import (
	"crypto/hmac"
	"crypto/sha1" // SigV2 is defined as HMAC-SHA1; it is opt-in (auth.signature_v2)
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/s3cond/s3cond/internal/requestline"
	"github.com/s3cond/s3cond/s3err"
)

// AWS Signature Version 2, accepted only when Verifier.SignatureV2 is set:
// the "Authorization: AWS AKID:signature" header and the presigned query
// ?AWSAccessKeyId=…&Expires=…&Signature=… (aws-cli v1's `aws s3 presign`).
// The string to sign covers the method, Content-MD5, Content-Type, the date
// (Expires when presigned), the x-amz-* headers and the resource; it covers
// neither the body nor Host (docs/security.md, "Signature Version 2").

// Names of the SigV2 presigned-URL query parameters, as S3 spells them.
const (
	queryV2AccessKeyID = requestline.SignatureV2AccessKeyID
	queryV2Expires     = requestline.SignatureV2Expires
	queryV2Signature   = requestline.SignatureV2Signature
)

// v2Subresources are the query parameters a SigV2 canonicalized resource
// includes (S3's list, with botocore's additions for newer subresources and
// the response-* overrides); others are not signed.
var v2Subresources = map[string]bool{
	"accelerate": true, "acl": true, "analytics": true, "cors": true, "delete": true,
	"encryption": true, "inventory": true, "legal-hold": true, "lifecycle": true,
	"location": true, "logging": true, "metrics": true, "notification": true,
	"object-lock": true, "partNumber": true, "policy": true, "replication": true,
	"requestPayment": true, "restore": true, "retention": true, "select": true,
	"select-type": true, "tagging": true, "torrent": true, "uploadId": true,
	"uploads": true, "versionId": true, "versioning": true, "versions": true,
	"website": true, "response-cache-control": true, "response-content-disposition": true,
	"response-content-encoding": true, "response-content-language": true,
	"response-content-type": true, "response-expires": true,
}

// maxPresignV2Lifetime bounds how far in the future a SigV2 URL may expire.
// SigV2 itself has no bound (Expires is an absolute time); s3cond applies
// SigV4's week so a leaked URL is not a permanent credential.
const maxPresignV2Lifetime = maxPresignExpiresSeconds * time.Second

// isSignatureV2Query reports whether the query asks for SigV2 presigned
// authentication: it names a key or a signature. Expires alone does not
// (S3 speaks of the "Signature query string parameter"); it is a stray
// parameter the proxy refuses.
func isSignatureV2Query(query map[string][]string) bool {
	_, accessKey := query[queryV2AccessKeyID]
	_, signature := query[queryV2Signature]
	return accessKey || signature
}

// verifyV2Header checks "Authorization: AWS AKID:signature".
func (v *Verifier) verifyV2Header(r *http.Request, credentials string) (*Request, *s3err.Error) {
	accessKeyID, signature, found := strings.Cut(credentials, ":")
	if !found || accessKeyID == "" || signature == "" || strings.ContainsAny(credentials, " ,") {
		return nil, s3err.Newf(s3err.InvalidArgument, "AWS authorization header is invalid.  Expected AwsAccessKeyId:signature").
			With("ArgumentName", headerAuthorization).
			With("ArgumentValue", "AWS "+credentials)
	}
	date, rawDate, dateLine, perr := v2RequestDate(r.Header)
	if perr != nil {
		return nil, perr
	}
	if perr := v.checkSkew(date, rawDate); perr != nil {
		return nil, perr
	}
	return v.checkV2(r, nil, accessKeyID, signature, dateLine, false)
}

// verifyV2Query checks a SigV2 presigned URL.
func (v *Verifier) verifyV2Query(r *http.Request, query map[string][]string) (*Request, *s3err.Error) {
	for _, name := range requestline.SignatureV2Params {
		switch values := query[name]; {
		case len(values) == 0 || values[0] == "":
			return nil, s3err.Newf(s3err.AccessDenied, "Query-string authentication requires the Signature, Expires and AWSAccessKeyId parameters")
		case len(values) > 1:
			return nil, s3err.Newf(s3err.InvalidArgument, "The query parameter %s is given more than once", name).
				With("ArgumentName", name)
		}
	}
	rawExpires := query[queryV2Expires][0]
	seconds, err := strconv.ParseInt(rawExpires, 10, 64)
	if err != nil || seconds < 0 {
		return nil, s3err.Newf(s3err.AccessDenied, "Invalid date (should be seconds since epoch): %s", rawExpires)
	}
	expires, now := time.Unix(seconds, 0), v.now()
	if now.After(expires) {
		return nil, s3err.Newf(s3err.AccessDenied, "Request has expired").
			With("Expires", expires.UTC().Format(time.RFC3339)).
			With("ServerTime", now.UTC().Format(time.RFC3339))
	}
	if expires.Sub(now) > maxPresignV2Lifetime {
		return nil, s3err.Newf(s3err.AccessDenied, "Request expires more than %d seconds from now, the longest s3cond accepts", maxPresignExpiresSeconds).
			With("Expires", expires.UTC().Format(time.RFC3339)).
			With("ServerTime", now.UTC().Format(time.RFC3339))
	}
	return v.checkV2(r, query, query[queryV2AccessKeyID][0], query[queryV2Signature][0], rawExpires, true)
}

// checkV2 looks up the key, compares the signature in constant time and
// wraps the body. query is nil for the header form.
func (v *Verifier) checkV2(r *http.Request, query map[string][]string, accessKeyID, signature, dateLine string, presigned bool) (*Request, *s3err.Error) {
	secret, ok := v.Credentials.Secret(accessKeyID)
	if !ok {
		return nil, s3err.New(s3err.InvalidAccessKeyID).With("AWSAccessKeyId", accessKeyID)
	}
	if perr := v.checkSessionToken(r, query); perr != nil {
		return nil, perr
	}
	toSign := v2StringToSign(r, dateLine, v.virtualHostBucket(r.Host))
	mac := hmac.New(sha1.New, []byte(secret))
	mac.Write([]byte(toSign))
	provided, err := base64.StdEncoding.Strict().DecodeString(signature)
	if err != nil || !hmac.Equal(mac.Sum(nil), provided) {
		return nil, s3err.New(s3err.SignatureDoesNotMatch).
			With("AWSAccessKeyId", accessKeyID).
			With("StringToSign", toSign).
			With("SignatureProvided", signature).
			With("StringToSignBytes", spacedHex(toSign))
	}
	// SigV2 signs no payload hash; a declared one (or Content-MD5, a
	// checksum) is still verified by the body, as for an anonymous request.
	mode, digest := PayloadUnsigned, ""
	if value := r.Header.Get(headerContentSHA256); value != "" {
		var perr *s3err.Error
		if mode, digest, perr = parsePayloadHash(value); perr != nil {
			return nil, perr
		}
		if mode.isSignedStreaming() {
			return nil, s3err.Newf(s3err.InvalidRequest, "%s requires Signature Version 4", value)
		}
	}
	req := &Request{AccessKeyID: accessKeyID, Presigned: presigned, SignatureV2: true, Mode: mode}
	if perr := req.initBody(r, digest, nil); perr != nil {
		return nil, perr
	}
	return req, nil
}

// checkSkew refuses a header-signed request whose date is too far from now.
func (v *Verifier) checkSkew(date time.Time, rawDate string) *s3err.Error {
	now := v.now()
	if now.Sub(date).Abs() <= v.maxSkew() {
		return nil
	}
	return s3err.New(s3err.RequestTimeTooSkewed).
		With("RequestTime", rawDate).
		With("ServerTime", now.UTC().Format(time.RFC3339)).
		With("MaxAllowedSkewMilliseconds", strconv.FormatInt(v.maxSkew().Milliseconds(), 10))
}

// v2DateLayouts are the Date spellings SigV2 clients send: RFC 1123 with
// GMT (botocore), with a numeric zone (AWS's examples), and HTTP's others.
var v2DateLayouts = []string{http.TimeFormat, time.RFC1123Z, time.RFC1123, time.RFC850, time.ANSIC}

// v2RequestDate reads x-amz-date, else Date. dateLine is the string to
// sign's date line: empty when x-amz-date is present (it is then signed
// among the x-amz-* headers), as S3 defines it. An x-amz-date that is sent
// is the date even when empty: S3 refuses it then, it does not fall back to
// Date. A date before the Unix epoch is no valid date (S3: AccessDenied, not
// RequestTimeTooSkewed).
func v2RequestDate(h http.Header) (date time.Time, raw, dateLine string, err *s3err.Error) {
	if amzDate := h[headerAmzDate]; len(amzDate) > 0 {
		raw = amzDate[0]
	} else {
		raw = h.Get(headerDate)
		dateLine = raw
	}
	for _, layout := range v2DateLayouts {
		if t, perr := time.Parse(layout, raw); perr == nil && raw != "" && t.Unix() >= 0 {
			return t, raw, dateLine, nil
		}
	}
	return time.Time{}, raw, "", errNoValidDate()
}

func (v *Verifier) virtualHostBucket(host string) string {
	if v.VirtualHostBucket == nil {
		return ""
	}
	return v.VirtualHostBucket(host)
}

// v2StringToSign builds S3's SigV2 string to sign. bucket is the bucket
// named by a virtual-hosted Host ("" for path style).
func v2StringToSign(r *http.Request, dateLine, bucket string) string {
	var b strings.Builder
	b.WriteString(r.Method)
	b.WriteByte('\n')
	b.WriteString(strings.TrimSpace(r.Header.Get("Content-Md5")))
	b.WriteByte('\n')
	b.WriteString(strings.TrimSpace(r.Header.Get("Content-Type")))
	b.WriteByte('\n')
	b.WriteString(strings.TrimSpace(dateLine))
	b.WriteByte('\n')
	appendV2AmzHeaders(&b, r.Header)
	if bucket != "" {
		b.WriteByte('/')
		b.WriteString(bucket)
	}
	b.WriteString(requestline.RawPath(r))
	appendV2Subresources(&b, r.URL.RawQuery)
	return b.String()
}

// verifyV2 handles the requests that are SigV2's (handled): a header in the
// "AWS" scheme, or a query with a SigV2 parameter. Combined with another
// mechanism it is S3's "Only one auth mechanism allowed".
func (v *Verifier) verifyV2(r *http.Request, query map[string][]string, authorization []string, presignedV4 bool) (req *Request, handled bool, err *s3err.Error) {
	v2Query := isSignatureV2Query(query)
	v2Header := len(authorization) == 1 && strings.HasPrefix(strings.TrimLeft(authorization[0], " "), signatureV2Scheme+" ")
	switch {
	case v2Query && (len(authorization) > 0 || presignedV4):
		return nil, true, s3err.Newf(s3err.InvalidArgument, "Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature query string parameter or the Authorization header should be specified").
			With("ArgumentName", headerAuthorization).
			With("ArgumentValue", "null")
	case v2Query:
		req, err = v.verifyV2Query(r, query)
		return req, true, err
	case v2Header && !presignedV4:
		_, credentials, _ := strings.Cut(strings.TrimLeft(authorization[0], " "), " ")
		req, err = v.verifyV2Header(r, credentials)
		return req, true, err
	}
	return nil, false, nil
}

package sigv4

import (
	"iter"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/s3cond/s3cond/s3err"
)

// credentialScope is the Credential element: AKID/YYYYMMDD/REGION/SERVICE/aws4_request.
type credentialScope struct {
	accessKeyID string
	date        string // YYYYMMDD as the client wrote it
	region      string
	service     string
	terminator  string
}

// scope is the scope line of the string to sign (without the access key).
func (c credentialScope) scope() string {
	return c.date + "/" + c.region + "/" + c.service + "/" + c.terminator
}

// authFields is what a client's signature claims, from the Authorization
// header or from the presigned-URL query.
type authFields struct {
	credential    credentialScope
	signedHeaders string // verbatim, for the canonical request's signed-headers line
	signature     string
}

// names yields the signed header names, lower-cased, in the client's order.
func (f authFields) names() iter.Seq[string] { return signedHeaderNames(f.signedHeaders) }

// presignFields adds the presigned-URL-only parameters.
type presignFields struct {
	authFields
	amzDate time.Time
	expires time.Duration
}

const credentialFormatHint = `the Credential is mal-formed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".`

// signatureV2Scheme is the Authorization scheme of AWS signature version 2.
const signatureV2Scheme = "AWS"

// errUnsupportedAuthMechanism answers SigV2 ("AWS AK:sig", or a SigV2
// presigned URL): S3 answers it in regions launched after 2014 with this 400
// InvalidRequest, and s3cond supports no SigV2. A 400 tells the client
// plainly to sign differently, where a 501 would suggest retrying elsewhere.
func errUnsupportedAuthMechanism() *s3err.Error {
	return s3err.Newf(s3err.InvalidRequest, "The authorization mechanism you have provided is not supported. Please use %s.", signingAlgorithm)
}

// errUnsupportedAuthType answers an Authorization scheme S3 does not know
// at all (or SigV4a, "AWS4-ECDSA-P256-SHA256", which s3cond does not
// verify), as S3 does: 400 InvalidArgument naming the scheme.
func errUnsupportedAuthType(scheme string) *s3err.Error {
	return s3err.Newf(s3err.InvalidArgument, "Unsupported Authorization Type").
		With("ArgumentName", headerAuthorization).
		With("ArgumentValue", scheme)
}

// errAuthHeaderWithoutSpace answers an Authorization header that is one
// word: S3 cannot even tell its scheme.
func errAuthHeaderWithoutSpace(value string) *s3err.Error {
	return s3err.Newf(s3err.InvalidArgument, "Authorization header is invalid -- one and only one ' ' (space) required.").
		With("ArgumentName", headerAuthorization).
		With("ArgumentValue", value)
}

func headerMalformed(detail string) *s3err.Error {
	return s3err.Newf(s3err.AuthorizationHeaderMalformed, "The authorization header is malformed; %s", detail)
}

func queryParamsError(message string) *s3err.Error {
	return s3err.Newf(s3err.AuthorizationQueryParametersError, "%s", message)
}

func malformedComponent(component string) *s3err.Error {
	return headerMalformed("the authorization component \"" + component + "\" is malformed.")
}

// parseAuthorization parses an AWS4-HMAC-SHA256 Authorization header value.
// Like S3 it accepts the three components in any order, separated by commas
// with optional spaces around them. Its errors are S3's, in S3's order: the
// scheme, then each component's shape, then the one that is missing.
func parseAuthorization(value string) (authFields, *s3err.Error) {
	scheme, rest, found := strings.Cut(strings.TrimLeft(value, " "), " ")
	switch {
	case !found:
		return authFields{}, errAuthHeaderWithoutSpace(value)
	case scheme == signatureV2Scheme:
		return authFields{}, errUnsupportedAuthMechanism()
	case scheme != signingAlgorithm:
		return authFields{}, errUnsupportedAuthType(scheme)
	}
	var fields authFields
	var haveCredential, haveSignedHeaders, haveSignature bool
	components := 0
	for component := range strings.SplitSeq(rest, ",") {
		component = strings.TrimSpace(component)
		if component == "" {
			continue
		}
		components++
		name, val, found := strings.Cut(component, "=")
		if !found {
			return authFields{}, malformedComponent(component)
		}
		switch name {
		case "Credential":
			if haveCredential {
				return authFields{}, malformedComponent(component)
			}
			cred, ok := parseCredential(val)
			if !ok {
				return authFields{}, headerMalformed(credentialFormatHint)
			}
			fields.credential, haveCredential = cred, true
		case "SignedHeaders":
			if haveSignedHeaders {
				return authFields{}, malformedComponent(component)
			}
			fields.signedHeaders = val
			haveSignedHeaders = true
		case "Signature":
			if haveSignature {
				return authFields{}, malformedComponent(component)
			}
			fields.signature, haveSignature = val, true
		}
		// Any other name stands where a required component should: the
		// missing one is named below.
	}
	switch {
	case components < 3:
		return authFields{}, headerMalformed("the authorization header requires three components: Credential, SignedHeaders, and Signature.")
	case !haveCredential:
		return authFields{}, headerMalformed("missing Credential.")
	case !haveSignedHeaders || !hasName(fields.names()):
		return authFields{}, headerMalformed("missing SignedHeaders.")
	case !haveSignature || fields.signature == "":
		return authFields{}, headerMalformed("missing Signature.")
	case components > 3:
		return authFields{}, headerMalformed("the authorization header requires three components: Credential, SignedHeaders, and Signature.")
	}
	return fields, nil
}

// parseCredential splits AKID/YYYYMMDD/REGION/SERVICE/TERMINATOR. It checks
// only the shape; the verifier checks the values against its configuration.
func parseCredential(value string) (credentialScope, bool) {
	var parts [5]string
	rest := value
	for i := range parts {
		if i == len(parts)-1 {
			parts[i], rest = rest, ""
		} else {
			var found bool
			if parts[i], rest, found = strings.Cut(rest, "/"); !found {
				return credentialScope{}, false
			}
		}
		if parts[i] == "" || strings.Contains(parts[i], "/") {
			return credentialScope{}, false
		}
	}
	return credentialScope{
		accessKeyID: parts[0],
		date:        parts[1],
		region:      parts[2],
		service:     parts[3],
		terminator:  parts[4],
	}, true
}

// signs reports whether the signature covers the header name (any case).
func (f authFields) signs(name string) bool {
	for signed := range f.names() {
		if strings.EqualFold(signed, name) {
			return true
		}
	}
	return false
}

// signedHeaderNames yields the names of a SignedHeaders value split on
// ';', trimmed and lower-cased, empty ones skipped. It splits as it goes:
// a slice of the names was one allocation per request (issue 35 item 7),
// and ToLower allocates only for a name not already in lower case, as
// clients send them.
func signedHeaderNames(value string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for name := range strings.SplitSeq(value, ";") {
			if name = strings.TrimSpace(name); name != "" && !yield(strings.ToLower(name)) {
				return
			}
		}
	}
}

// hasName reports whether names yields any.
func hasName(names iter.Seq[string]) bool {
	for range names {
		return true
	}
	return false
}

// isPresigned reports whether the query carries presigned-URL authentication.
func isPresigned(query url.Values) bool {
	_, ok := query[queryAlgorithm]
	return ok
}

// parsePresignQuery parses the X-Amz-* authentication parameters of a
// presigned URL. Errors are S3's 400 AuthorizationQueryParametersError.
func parsePresignQuery(query url.Values) (presignFields, *s3err.Error) {
	if query.Get(queryAlgorithm) != signingAlgorithm {
		return presignFields{}, queryParamsError(`X-Amz-Algorithm only supports "` + signingAlgorithm + `"`)
	}
	for _, name := range []string{queryCredential, querySignature, queryDate, querySignedHeaders, queryExpires} {
		if query.Get(name) == "" {
			return presignFields{}, queryParamsError("Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.")
		}
	}
	var fields presignFields
	cred, ok := parseCredential(query.Get(queryCredential))
	if !ok {
		return presignFields{}, queryParamsError("Error parsing the X-Amz-Credential parameter; " + credentialFormatHint)
	}
	fields.credential = cred
	fields.signedHeaders = query.Get(querySignedHeaders)
	fields.signature = query.Get(querySignature)

	amzDate, err := time.Parse(amzDateLayout, query.Get(queryDate))
	if err != nil {
		return presignFields{}, queryParamsError(`X-Amz-Date must be in the ISO8601 Long Format "yyyyMMdd'T'HHmmss'Z'"`)
	}
	fields.amzDate = amzDate

	seconds, err := strconv.ParseInt(query.Get(queryExpires), 10, 64)
	switch {
	case err != nil:
		return presignFields{}, queryParamsError("X-Amz-Expires should be a number")
	case seconds < 0:
		return presignFields{}, queryParamsError("X-Amz-Expires must be non-negative")
	case seconds == 0:
		// S3 documents 1..604800; a URL valid for no time at all is a client bug.
		return presignFields{}, queryParamsError("X-Amz-Expires must be at least 1 second")
	case seconds > maxPresignExpiresSeconds:
		return presignFields{}, queryParamsError("X-Amz-Expires must be less than a week (in seconds); that is, the given X-Amz-Expires must be less than 604800 seconds")
	}
	fields.expires = time.Duration(seconds) * time.Second
	return fields, nil
}

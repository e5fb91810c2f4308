package sigv4

import (
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
	signedHeaders string   // verbatim, for the canonical request's signed-headers line
	headerNames   []string // signedHeaders split on ';', lowercased
	signature     string
}

// presignFields adds the presigned-URL-only parameters.
type presignFields struct {
	authFields
	amzDate time.Time
	expires time.Duration
}

const credentialFormatHint = `the Credential is mal-formed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".`

// errUnsupportedAuthMechanism answers any Authorization scheme other than
// AWS4-HMAC-SHA256 (SigV2 "AWS AK:sig", SigV4a "AWS4-ECDSA-P256-SHA256", ...).
// S3 answers SigV2 in regions launched after 2014 with this 400 InvalidRequest,
// and s3cond supports neither SigV2 nor SigV4a; a 400 tells the client plainly
// to sign differently, where a 501 would suggest retrying elsewhere.
func errUnsupportedAuthMechanism() *s3err.Error {
	return s3err.Newf(s3err.InvalidRequest, "The authorization mechanism you have provided is not supported. Please use %s.", signingAlgorithm)
}

func headerMalformed(detail string) *s3err.Error {
	return s3err.Newf(s3err.AuthorizationHeaderMalformed, "The authorization header is malformed; %s", detail)
}

func queryParamsError(message string) *s3err.Error {
	return s3err.Newf(s3err.AuthorizationQueryParametersError, "%s", message)
}

// parseAuthorization parses an AWS4-HMAC-SHA256 Authorization header value.
// Like S3 it accepts the three components in any order, separated by commas
// with optional spaces around them.
func parseAuthorization(value string) (authFields, *s3err.Error) {
	scheme, rest, _ := strings.Cut(strings.TrimLeft(value, " "), " ")
	if scheme != signingAlgorithm {
		return authFields{}, errUnsupportedAuthMechanism()
	}
	var fields authFields
	var haveCredential, haveSignedHeaders, haveSignature bool
	for component := range strings.SplitSeq(rest, ",") {
		component = strings.TrimSpace(component)
		if component == "" {
			continue
		}
		name, val, found := strings.Cut(component, "=")
		if !found {
			return authFields{}, headerMalformed("the authorization component \"" + component + "\" is malformed.")
		}
		switch name {
		case "Credential":
			if haveCredential {
				return authFields{}, headerMalformed("the authorization component \"" + component + "\" is malformed.")
			}
			cred, ok := parseCredential(val)
			if !ok {
				return authFields{}, headerMalformed(credentialFormatHint)
			}
			fields.credential, haveCredential = cred, true
		case "SignedHeaders":
			if haveSignedHeaders {
				return authFields{}, headerMalformed("the authorization component \"" + component + "\" is malformed.")
			}
			fields.signedHeaders, fields.headerNames = val, splitSignedHeaders(val)
			haveSignedHeaders = true
		case "Signature":
			if haveSignature {
				return authFields{}, headerMalformed("the authorization component \"" + component + "\" is malformed.")
			}
			fields.signature, haveSignature = val, true
		default:
			return authFields{}, headerMalformed("the authorization component \"" + component + "\" is malformed.")
		}
	}
	if !haveCredential || !haveSignedHeaders || !haveSignature {
		return authFields{}, headerMalformed("the authorization header requires three components: Credential, SignedHeaders, and Signature.")
	}
	if len(fields.headerNames) == 0 || fields.signature == "" {
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
	for _, signed := range f.headerNames {
		if strings.EqualFold(signed, name) {
			return true
		}
	}
	return false
}

func splitSignedHeaders(value string) []string {
	names := make([]string, 0, strings.Count(value, ";")+1)
	for name := range strings.SplitSeq(value, ";") {
		if name = strings.TrimSpace(name); name != "" {
			names = append(names, strings.ToLower(name))
		}
	}
	return names
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
	fields.headerNames = splitSignedHeaders(fields.signedHeaders)
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
		return presignFields{}, queryParamsError("X-Amz-Expires must be less than a week (in seconds) that is 604800")
	}
	fields.expires = time.Duration(seconds) * time.Second
	return fields, nil
}
